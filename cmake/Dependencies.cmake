# Every dependency is a Debian package; .ci/run and the README's setup command install them.
find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

# LLVM's headers are system headers to us so their warnings do not fail our build. A target that
# sets XCUDA_STATIC_LLVM (xcuda_link_llvm_statically, below) links LLVM's static archives, of the
# host's target and AMDGPU's: the xcuda tool does, which spent about 14 ms of every run
# relocating and paging in the shared libLLVM, as long as ptxas takes for a whole small module.
# The rest links the shared libLLVM, which keeps the tests' many links fast on two cores.
set(XCUDA_LLVM_STATIC_TARGETS ${LLVM_NATIVE_ARCH} AMDGPU)
llvm_map_components_to_libnames(XCUDA_LLVM_ARCHIVES
  core support passes irreader bitreader bitwriter linker object orcjit jitlink lto option targetparser
  ${XCUDA_LLVM_STATIC_TARGETS})
add_library(xcuda_llvm INTERFACE)
target_include_directories(xcuda_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(xcuda_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(xcuda_llvm INTERFACE "$<IF:$<BOOL:$<TARGET_PROPERTY:XCUDA_STATIC_LLVM>>,${XCUDA_LLVM_ARCHIVES},LLVM>")

# Links `target` with LLVM's static archives. lld's ELF driver initialises every target LLVM was
# built with; the target compiles for the host and links AMDGPU code objects, so the other
# targets' initialisers are empty here and their archives stay out: their static constructors,
# registering options, ran at every start, and relocating and paging in their tables cost more:
# the tool's start took 3.8 ms instead of 4.8, and its binary was 87 MB instead of 127. Likewise
# Polly: Debian's LTO library, which lld's ELF driver needs, asks for Polly's plugin, which only
# LTO of bitcode would use, and the tool links no bitcode. Polly's options and passes registered
# themselves at every start (start 2.7 -> 2.3 ms of CPU, `perf stat -r 40 xcuda --help`; binary
# 89 -> 85 MB).
function(xcuda_link_llvm_statically target)
  set_target_properties(${target} PROPERTIES XCUDA_STATIC_LLVM ON)
  set(stubs "#include <llvm/Passes/PassPlugin.h>\n")
  foreach(llvm_target IN LISTS LLVM_TARGETS_TO_BUILD)
    if(NOT llvm_target IN_LIST XCUDA_LLVM_STATIC_TARGETS)
      foreach(part TargetInfo Target TargetMC AsmPrinter AsmParser)
        string(APPEND stubs "extern \"C\" void LLVMInitialize${llvm_target}${part}() {}\n")
      endforeach()
    endif()
  endforeach()
  string(APPEND stubs "llvm::PassPluginLibraryInfo getPollyPluginInfo() { return {LLVM_PLUGIN_API_VERSION, \"Polly\", \"\", [](llvm::PassBuilder&) {}}; }\n")
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/${target}_llvm_stubs.cpp CONTENT "${stubs}")
  target_sources(${target} PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/${target}_llvm_stubs.cpp)
  target_include_directories(${target} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
endfunction()

# spdlog and fmt as headers only: their shared libraries would load the shared C++ runtime into
# the xcuda tool, whose thousands of relocations the loader resolved at every start.
find_package(spdlog REQUIRED)
add_library(xcuda_logging INTERFACE)
target_compile_definitions(xcuda_logging INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
target_include_directories(xcuda_logging SYSTEM INTERFACE $<TARGET_PROPERTY:spdlog::spdlog_header_only,INTERFACE_INCLUDE_DIRECTORIES>)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

# AMDGPU code objects: lld's ELF driver links them in-process. Debian ships lld only as static PIC
# archives, which need zlib and zstd. The ROCm device libraries (ocml bitcode) give AMDGPU code its
# C library functions; comgr reads code-object metadata back in tests/amdgpu.
find_library(LLD_ELF_LIBRARY lldELF HINTS ${LLVM_LIBRARY_DIRS} NO_DEFAULT_PATH REQUIRED)
find_library(LLD_COMMON_LIBRARY lldCommon HINTS ${LLVM_LIBRARY_DIRS} NO_DEFAULT_PATH REQUIRED)
add_library(xcuda_lld INTERFACE)
target_link_libraries(xcuda_lld INTERFACE ${LLD_ELF_LIBRARY} ${LLD_COMMON_LIBRARY} xcuda_llvm z zstd)
find_path(ROCM_DEVICE_LIBS ocml.bc PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /opt/rocm/amdgcn/bitcode REQUIRED)
find_package(amd_comgr CONFIG REQUIRED)
