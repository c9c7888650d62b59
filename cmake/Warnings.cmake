# Warnings are errors on CI, where a fresh compiler sees the tree; locally they stay warnings so
# a half-finished edit still builds.
option(XCUDA_WERROR "Treat warnings as errors" $ENV{CI})
function(xcuda_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  # GCC 12 reports impossible sizes inside libstdc++'s own std::string code when it inlines
  # operator+ at -O2 (GCC bugs 105329 and 105651); they say nothing about our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict -Wno-stringop-overflow -Wno-array-bounds)
  endif()
  if(XCUDA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
