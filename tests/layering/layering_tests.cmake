# Layering: gnn/ includes only the kernels' public headers. The build runs the
# check on gnn/ (gnn/CMakeLists.txt); these tests run it again and show it fails on
# a tree that breaks the rule, naming each bad include.
set(EDGEWISE_CHECK_INCLUDES ${PROJECT_SOURCE_DIR}/cmake/EdgewiseCheckIncludes.cmake)
add_test(NAME gnn_public_includes
  COMMAND ${CMAKE_COMMAND} -DGNN_DIR=${PROJECT_SOURCE_DIR}/gnn -DKERNELS_DIR=${PROJECT_SOURCE_DIR}/kernels
          -P ${EDGEWISE_CHECK_INCLUDES})
add_test(NAME gnn_public_includes_rejects_private
  COMMAND ${CMAKE_COMMAND} -DGNN_DIR=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad_gnn
          -DKERNELS_DIR=${PROJECT_SOURCE_DIR}/kernels -P ${EDGEWISE_CHECK_INCLUDES})
# Both bad includes must be named, and the good one must not be.
set_tests_properties(gnn_public_includes_rejects_private PROPERTIES
  PASS_REGULAR_EXPRESSION "bad_ops.cu: #include \"common/launch.cuh\" resolves only into kernels/src.*bad.hpp: #include \"edgewise/kernels/common/launch.cuh\" is not a public kernels header"
  FAIL_REGULAR_EXPRESSION "segment_reduce.hpp")
set_tests_properties(gnn_public_includes gnn_public_includes_rejects_private PROPERTIES LABELS cpu)
