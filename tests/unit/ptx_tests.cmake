# The PTX compiler's unit tests; included from tests/unit/CMakeLists.txt (and from a PTX-only
# build), which provides xcuda_unit_test().
set(xcuda_ptx_test_dir ${CMAKE_CURRENT_LIST_DIR})

add_library(xcuda_ptx_test_loader STATIC ${xcuda_ptx_test_dir}/ptx_object_loader.cpp)
# The runtime's fibers run the kernels whose threads wait for each other in ways regions cannot.
target_link_libraries(xcuda_ptx_test_loader PUBLIC xcuda_ptx xcuda_llvm xcuda_runtime)
xcuda_warnings(xcuda_ptx_test_loader)

foreach(test ptx_lexer_test ptx_parser_test ptx_checker_test ptx_execution_test ptx_instruction_test ptx_warp_test
             ptx_narrow_float_test ptx_kernel_selection_test ptx_excerpt_test ptx_host_machine_test)
  xcuda_unit_test(${test} SOURCES ${xcuda_ptx_test_dir}/${test}.cpp LIBRARIES xcuda_ptx_test_loader)
  target_compile_definitions(${test} PRIVATE XCUDA_PTX_INPUTS="${xcuda_ptx_test_dir}/ptx_inputs")
endforeach()

# The execution tests also run kernels.cu as nvcc compiles it with other flags: debug info
# (-G: .loc, debug sections, unoptimised code) and other targets. Generated, never committed.
find_program(XCUDA_NVCC nvcc HINTS /usr/local/cuda/bin)
set(xcuda_ptx_generated)
if(XCUDA_NVCC)
  set(xcuda_ptx_variants "sm75_debug|-arch=sm_75 -G" "sm90_lineinfo|-arch=sm_90 -lineinfo")
  # nvcc does not create the folder of its output.
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/ptx_inputs)
  foreach(variant IN LISTS xcuda_ptx_variants)
    string(REPLACE "|" ";" parts "${variant}")
    list(GET parts 0 suffix)
    list(GET parts 1 flags)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    set(output ${CMAKE_CURRENT_BINARY_DIR}/ptx_inputs/kernels_${suffix}.ptx)
    add_custom_command(
      OUTPUT ${output}
      COMMAND ${XCUDA_NVCC} -ptx ${flags} ${xcuda_ptx_test_dir}/ptx_inputs/kernels.cu -o ${output}
      DEPENDS ${xcuda_ptx_test_dir}/ptx_inputs/kernels.cu
      COMMENT "nvcc -ptx: kernels_${suffix}.ptx"
      VERBATIM)
    list(APPEND xcuda_ptx_generated ${output})
  endforeach()
  add_custom_target(xcuda_ptx_test_inputs DEPENDS ${xcuda_ptx_generated})
  add_dependencies(ptx_execution_test xcuda_ptx_test_inputs)
elseif("$ENV{CI}")
  message(FATAL_ERROR "nvcc is needed for the PTX execution tests on CI")
endif()
list(JOIN xcuda_ptx_generated "," xcuda_ptx_generated_list)
target_compile_definitions(ptx_execution_test PRIVATE XCUDA_PTX_GENERATED="${xcuda_ptx_generated_list}")

# Expected values for directed roundings are computed with the host's rounding mode switched.
target_compile_options(ptx_instruction_test PRIVATE -frounding-math)
