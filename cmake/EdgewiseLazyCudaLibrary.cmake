# edgewise_lazy_cuda_library(<target> <CUDA::library> <PREFIX>): lets <target> call the
# library through EW_LAZY_FUNCTION (edgewise/kernels/common/lazy_library.hpp) instead
# of linking it, so it is loaded on first use: defines <PREFIX>_SONAME (e.g.
# "libcublas.so.13") and <PREFIX>_PATH (that file in the directory the build found it
# in, tried when dlopen's search path lacks it) and adds the toolkit's headers.
function(edgewise_lazy_cuda_library target library prefix)
  get_target_property(location ${library} IMPORTED_LOCATION)
  if(NOT location)
    get_target_property(location ${library} IMPORTED_LOCATION_RELEASE)
  endif()
  if(NOT location)
    message(FATAL_ERROR "edgewise_lazy_cuda_library: ${library} has no IMPORTED_LOCATION")
  endif()
  file(REAL_PATH ${location} real)
  get_filename_component(dir ${real} DIRECTORY)
  get_filename_component(name ${real} NAME)
  string(REGEX MATCH "^lib[^.]+\\.so\\.[0-9]+" soname "${name}")
  if(NOT soname)
    message(FATAL_ERROR "edgewise_lazy_cuda_library: cannot tell the soname of ${real}")
  endif()
  target_compile_definitions(${target} PRIVATE ${prefix}_SONAME="${soname}" ${prefix}_PATH="${dir}/${soname}")
  target_include_directories(${target} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
  message(STATUS "Edgewise: ${target} loads ${soname} on first use (fallback ${dir}/${soname})")
endfunction()
