# Every dependency is a Debian package; .ci/run and the README's setup command install them.
find_package(LLVM 19.1 REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
message(STATUS "LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

# One shared libLLVM keeps links fast on two cores; LLVM's headers are system headers to us so
# their warnings do not fail our build.
add_library(xcuda_llvm INTERFACE)
target_include_directories(xcuda_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(xcuda_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(xcuda_llvm INTERFACE LLVM)

find_package(spdlog REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LZ4 REQUIRED IMPORTED_TARGET liblz4)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)
