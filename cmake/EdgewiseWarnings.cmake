# Warning flags for Edgewise's own targets: edgewise_target_warnings(<target>).
# Our CUDA code always builds with warnings as errors; C++ does under EDGEWISE_WERROR.
function(edgewise_target_warnings target)
  set(cxx_flags -Wall -Wextra -Wpedantic -Wno-unknown-pragmas)
  # GCC 12 at -O3 reports impossible overlaps inside std::string's operator+
  # (GCC PR 105329, a known false positive); it would turn -Werror into noise.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    list(APPEND cxx_flags -Wno-restrict)
  endif()
  if(EDGEWISE_WERROR)
    list(APPEND cxx_flags -Werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${cxx_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra,-Werror>)
  if(EDGEWISE_SANITIZE)
    set(sanitize_flags -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    if(EDGEWISE_UBSAN_SKIP)
      list(APPEND sanitize_flags -fno-sanitize=${EDGEWISE_UBSAN_SKIP})
    endif()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${sanitize_flags}>)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
  endif()
endfunction()
