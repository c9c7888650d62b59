# The PTX compiler's unit tests; included from tests/unit/CMakeLists.txt (and from a PTX-only
# build), which provides xcuda_unit_test().
set(xcuda_ptx_test_dir ${CMAKE_CURRENT_LIST_DIR})

add_library(xcuda_ptx_test_loader STATIC ${xcuda_ptx_test_dir}/ptx_object_loader.cpp)
target_link_libraries(xcuda_ptx_test_loader PUBLIC xcuda_ptx)
xcuda_warnings(xcuda_ptx_test_loader)

foreach(test ptx_lexer_test ptx_parser_test ptx_checker_test ptx_execution_test ptx_instruction_test)
  xcuda_unit_test(${test} SOURCES ${xcuda_ptx_test_dir}/${test}.cpp LIBRARIES xcuda_ptx_test_loader)
  target_compile_definitions(${test} PRIVATE XCUDA_PTX_INPUTS="${xcuda_ptx_test_dir}/ptx_inputs")
endforeach()
# Expected values for directed roundings are computed with the host's rounding mode switched.
target_compile_options(ptx_instruction_test PRIVATE -frounding-math)
