# pytest over tests/python against the build-tree package (needs EDGEWISE_BUILD_PYTHON).
if(TARGET _edgewise)
  set(python_test_env "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
  if(EDGEWISE_SANITIZE)
    # The interpreter is not instrumented: the sanitizer runtimes must be loaded
    # first, and CPython's deliberate leaks at exit are not findings.
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE asan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libubsan.so
                    OUTPUT_VARIABLE ubsan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND python_test_env "LD_PRELOAD=${asan_runtime}:${ubsan_runtime}"
         "ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1"
         "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()
  add_test(NAME python_tests
           COMMAND ${EDGEWISE_PYTHON_EXECUTABLE} -m pytest -q ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python_tests PROPERTIES LABELS "cpu;python" ENVIRONMENT "${python_test_env}")
endif()
