// Per-ISA translation units and their dispatch (see edgewise/kernels/cpu_isa.hpp).
//
// A dispatched CPU file puts its code in `namespace EW_CPU_ISA_NS` inside its detail
// namespace; the build compiles it once per level with EW_CPU_ISA_NS set to
// isa_baseline / isa_avx2 / isa_avx512 and the level's -march (kernels/CMakeLists.txt,
// EDGEWISE_ISA_DISPATCH_SOURCES). Its backends header declares the entry points in
// the three namespaces and defines the dispatcher with the original name, which
// calls the copy for cpu_isa(). Without dispatch (EDGEWISE_CPU_DISPATCH 0) only
// isa_baseline exists.
#pragma once

#include "edgewise/kernels/cpu_isa.hpp"

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#endif
#ifndef EDGEWISE_CPU_DISPATCH
#define EDGEWISE_CPU_DISPATCH 0
#endif

namespace edgewise {

// Calls baseline(), avx2() or avx512() for cpu_isa().
template <class Baseline, class Avx2, class Avx512>
decltype(auto) dispatch_cpu_isa([[maybe_unused]] Baseline&& baseline, [[maybe_unused]] Avx2&& avx2,
                                [[maybe_unused]] Avx512&& avx512) {
#if EDGEWISE_CPU_DISPATCH
  switch (cpu_isa()) {
    case CpuIsa::Avx512: return avx512();
    case CpuIsa::Avx2: return avx2();
    case CpuIsa::Baseline: break;
  }
#endif
  return baseline();
}

}  // namespace edgewise
