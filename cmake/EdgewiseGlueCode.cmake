# edgewise_glue_code(<target>): code that parses flags or converts arguments and calls
# the libraries (programs, the CLI helpers, the Python bindings) compiles at -O1 in
# Release: it runs once per call, and its templates (CLI11, pybind11) take most of
# their -O3 compile time in optimisation.
function(edgewise_glue_code target)
  target_compile_options(${target} PRIVATE $<$<AND:$<CONFIG:Release>,$<COMPILE_LANGUAGE:CXX>>:-O1>)
endfunction()
