# edgewise_add_isa_variants(<target> SOURCES <files...> [DEFINITIONS <d...>] [OPTIONS <o...>]
#                           [INCLUDES <dirs...>] [LIBRARIES <libs...>])
# The one way a file opts into per-ISA copies (kernels/ and gnn/ alike): SOURCES are
# compiled once per level of EDGEWISE_ISA_LEVELS (baseline first: the linker keeps the
# first copy of a shared inline function, so shared helpers never carry AVX
# instructions) into an OBJECT library linked into <target>. Each copy sees
# EW_CPU_ISA_NS=isa_<level> (the namespace its code lives in), EW_CPU_ISA_LEVEL=<n>
# (the index in EDGEWISE_ISA_LEVELS_ALL), EDGEWISE_CPU_DISPATCH, and the level's -march;
# the runtime picks a level (edgewise/kernels/cpu_isa.hpp).
function(edgewise_add_isa_variants target)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEFINITIONS;OPTIONS;INCLUDES;LIBRARIES" ${ARGN})
  # The target's dispatchers (EW_DISPATCH_CPU_ISA) must know the copies exist, or they
  # call the baseline copy alone.
  target_compile_definitions(${target} PRIVATE EDGEWISE_CPU_DISPATCH=$<BOOL:${EDGEWISE_CPU_DISPATCH}>)
  foreach(level IN LISTS EDGEWISE_ISA_LEVELS)
    set(objects ${target}_isa_${level})
    add_library(${objects} OBJECT ${ARG_SOURCES})
    target_include_directories(${objects} PRIVATE ${ARG_INCLUDES})
    target_link_libraries(${objects} PRIVATE OpenMP::OpenMP_CXX ${ARG_LIBRARIES})
    list(FIND EDGEWISE_ISA_LEVELS_ALL ${level} level_number)
    string(REPLACE "<level>" "${level}" definitions "${ARG_DEFINITIONS}")
    target_compile_definitions(${objects} PRIVATE EW_CPU_ISA_NS=isa_${level} EW_CPU_ISA_LEVEL=${level_number}
                               EDGEWISE_CPU_DISPATCH=$<BOOL:${EDGEWISE_CPU_DISPATCH}> ${definitions})
    target_compile_options(${objects} PRIVATE ${EDGEWISE_ISA_MARCH_${level}} ${ARG_OPTIONS})
    edgewise_target_warnings(${objects})
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:${objects}>)
  endforeach()
endfunction()
