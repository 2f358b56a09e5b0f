# Layering (cmake/EdgewiseCheckIncludes.cmake): kernels/ never includes gnn/; data
# only data and kernels' common headers; the engine's areas in their order; dist and
# every other target only public headers. The build runs the check on the tree
# (top-level CMakeLists.txt); these tests run it again and show that it fails on a
# fixture tree breaking each rule, naming every bad include and no good one.
set(EDGEWISE_CHECK_INCLUDES ${PROJECT_SOURCE_DIR}/cmake/EdgewiseCheckIncludes.cmake)
add_test(NAME layering_of_the_tree
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -P ${EDGEWISE_CHECK_INCLUDES})
add_test(NAME layering_rejects_each_broken_rule
  COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad_tree -P ${EDGEWISE_CHECK_INCLUDES})
set_tests_properties(layering_rejects_each_broken_rule PROPERTIES
  PASS_REGULAR_EXPRESSION "kernels/src/uses_gnn.cpp: #include \"edgewise/gnn/tensor/tensor.hpp\" reaches into gnn/.*gnn/src/data/uses_graph.cpp: #include \"edgewise/gnn/graph/graph.hpp\" is engine code.*gnn/src/tensor/bad_ops.cu: #include \"common/launch.cuh\" reaches into kernels/src.*gnn/src/tensor/uses_nn.cpp: #include \"edgewise/gnn/nn/module.hpp\" is area 'nn', which comes after 'tensor'.*bad.hpp: #include \"edgewise/kernels/common/launch.cuh\" is not a public kernels header.*gnn/src/dist/private.cpp: #include \"train/checkpoint.hpp\" reaches into gnn/src/train.*tests/gnn/reaches.cpp: #include \"../../kernels/src/common/launch.cuh\" reaches into a library's src/"
  FAIL_REGULAR_EXPRESSION "segment_reduce.hpp")
set_tests_properties(layering_of_the_tree layering_rejects_each_broken_rule PROPERTIES LABELS cpu)
