# Warnings are errors on CI, where a fresh compiler sees the tree; locally they stay warnings so
# a half-finished edit still builds.
option(XCUDA_WERROR "Treat warnings as errors" $ENV{CI})
function(xcuda_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(XCUDA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
