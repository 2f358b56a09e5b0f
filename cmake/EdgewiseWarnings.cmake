# Warning flags for Edgewise's own targets: edgewise_target_warnings(<target>).
# Our CUDA code always builds with warnings as errors; C++ does under EDGEWISE_WERROR.
function(edgewise_target_warnings target)
  set(cxx_flags -Wall -Wextra -Wpedantic -Wno-unknown-pragmas)
  if(EDGEWISE_WERROR)
    list(APPEND cxx_flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
  if(EDGEWISE_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()
