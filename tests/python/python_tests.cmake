# pytest over tests/python against the build-tree package (needs EDGEWISE_BUILD_PYTHON).
if(TARGET _edgewise)
  add_test(NAME python_tests
           COMMAND ${EDGEWISE_PYTHON_EXECUTABLE} -m pytest -q ${CMAKE_CURRENT_SOURCE_DIR}/python)
  set_tests_properties(python_tests PROPERTIES LABELS "cpu;python"
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
endif()
