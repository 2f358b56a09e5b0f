# The programs of apps/ (edgewise-train, edgewise-bench, minibatch_sage) and the
# examples/hetero_sage example run with bad
# flags and bad output paths (exit code, the flag named on stderr) and with a
# dataset whose name needs escaping (the JSON and SVG must parse). Seconds, synthetic
# data only; needs Python 3 with NumPy and pytest. A program not built (e.g. the
# asan preset has no benchmarks) has its tests skipped.
set(programs_env PYTHONDONTWRITEBYTECODE=1)
foreach(pair "edgewise-train;EDGEWISE_TRAIN" "edgewise-bench;EDGEWISE_BENCH" "minibatch_sage;EDGEWISE_MINIBATCH_SAGE"
             "hetero_sage;EDGEWISE_HETERO_SAGE")
  list(GET pair 0 program)
  list(GET pair 1 variable)
  if(TARGET ${program})
    list(APPEND programs_env "${variable}=$<TARGET_FILE:${program}>")
  endif()
endforeach()
if(TARGET edgewise-train OR TARGET edgewise-bench)
  if(DEFINED EDGEWISE_PYTHON_EXECUTABLE)
    set(programs_python ${EDGEWISE_PYTHON_EXECUTABLE})
  else()
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
    set(programs_python ${Python3_EXECUTABLE})
  endif()
  add_test(NAME app_tests
           COMMAND ${programs_python} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR}/test_apps.py)
  set_tests_properties(app_tests PROPERTIES LABELS "cpu;apps" ENVIRONMENT "${programs_env}")
endif()
