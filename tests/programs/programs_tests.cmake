# Program-level tests: edgewise-train, edgewise-bench and minibatch_sage run with bad
# flags and bad output paths (exit code, the flag named on stderr) and with a
# dataset whose name needs escaping (the JSON and SVG must parse). Seconds, synthetic
# data only; needs Python 3 with NumPy and pytest.
if(TARGET edgewise-train AND TARGET edgewise-bench AND TARGET minibatch_sage)
  if(DEFINED EDGEWISE_PYTHON_EXECUTABLE)
    set(programs_python ${EDGEWISE_PYTHON_EXECUTABLE})
  else()
    find_package(Python3 REQUIRED COMPONENTS Interpreter)
    set(programs_python ${Python3_EXECUTABLE})
  endif()
  add_test(NAME program_tests
           COMMAND ${programs_python} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR}/test_programs.py)
  set_tests_properties(program_tests PROPERTIES LABELS "cpu;programs"
    ENVIRONMENT "EDGEWISE_TRAIN=$<TARGET_FILE:edgewise-train>;EDGEWISE_BENCH=$<TARGET_FILE:edgewise-bench>;EDGEWISE_MINIBATCH_SAGE=$<TARGET_FILE:minibatch_sage>;PYTHONDONTWRITEBYTECODE=1")
endif()
