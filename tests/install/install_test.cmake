# Installs Edgewise into a scratch prefix, then configures, builds and runs two
# outside projects that do find_package(Edgewise): one links edgewise::kernels
# alone, one links edgewise::gnn and trains a GCN (the package config must find
# every dependency of both targets).
add_test(NAME install_consumer
  COMMAND ${CMAKE_COMMAND}
    -DBUILD_DIR=${PROJECT_BINARY_DIR}
    -DCONSUMERS_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install
    -DEXAMPLES_DIR=${PROJECT_SOURCE_DIR}/examples
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_consumer
    -DGENERATOR=${CMAKE_GENERATOR}
    -DCUDA_COMPILER=${CMAKE_CUDA_COMPILER}
    -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run_install_test.cmake)
set_tests_properties(install_consumer PROPERTIES LABELS cpu TIMEOUT 600)
