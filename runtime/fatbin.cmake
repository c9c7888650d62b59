# The fatbin reader as its own small library, so the runtime and the unit tests can link it
# without the rest of the runtime. Include this from runtime/CMakeLists.txt, or fold
# fatbin_reader.cpp into the runtime library and link ZSTD and LZ4 there.
include_guard(GLOBAL)

add_library(xcuda_fatbin STATIC ${CMAKE_CURRENT_LIST_DIR}/fatbin_reader.cpp)
# Sources include "runtime/..." from the repository root.
target_include_directories(xcuda_fatbin PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(xcuda_fatbin PRIVATE PkgConfig::ZSTD PkgConfig::LZ4)
# It ends up inside libcuda.so.1.
set_target_properties(xcuda_fatbin PROPERTIES POSITION_INDEPENDENT_CODE ON)
if(COMMAND xcuda_warnings)
  xcuda_warnings(xcuda_fatbin)
endif()
