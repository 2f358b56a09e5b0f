# Installs Edgewise into a scratch prefix, then configures, builds and runs an
# outside project that does find_package(Edgewise) and links edgewise::kernels.
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install/consumer
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_consumer
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.cmake)
set_tests_properties(install_consumer PROPERTIES LABELS cpu TIMEOUT 600)
