# Script for the install_consumer test (cmake -P): install once, then for each
# consumer project (consumer: edgewise::kernels; consumer_data: edgewise::data alone;
# consumer_gnn: edgewise::gnn;
# consumer_example: the README's hand-written loop, examples/custom_training_loop.cpp
# exactly as it is in the tree) configure, build and run it against the installed package.
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
set(extra)
if(CUDA_COMPILER)
  set(extra -DCMAKE_CUDA_COMPILER=${CUDA_COMPILER})
endif()
foreach(consumer consumer consumer_data consumer_gnn consumer_example)
  set(build ${WORK_DIR}/${consumer})
  run(${CMAKE_COMMAND} -S ${CONSUMERS_DIR}/${consumer} -B ${build} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_BUILD_TYPE=Release -DEXAMPLES_DIR=${EXAMPLES_DIR} ${extra})
  run(${CMAKE_COMMAND} --build ${build})
  run(${build}/${consumer})
endforeach()
