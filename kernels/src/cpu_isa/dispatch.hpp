// Per-ISA translation units and their dispatch (see edgewise/kernels/cpu_isa.hpp).
//
// A dispatched CPU file puts its code in `namespace EW_CPU_ISA_NS` inside its detail
// namespace; the build compiles it once per level with EW_CPU_ISA_NS set to
// isa_baseline / isa_avx2 / isa_avx512 and the level's -march (kernels/CMakeLists.txt,
// EDGEWISE_ISA_DISPATCH_SOURCES). Its backends header declares the entry points once
// per level with EW_DECLARE_PER_CPU_ISA and defines the dispatcher with the original
// name, which calls the copy for cpu_isa() through EW_DISPATCH_CPU_ISA. Without
// dispatch (EDGEWISE_CPU_DISPATCH 0) only isa_baseline is compiled (the other
// levels' declarations are never called, so never linked).
#pragma once

#include "edgewise/kernels/cpu_isa.hpp"

#include <type_traits>

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#define EW_CPU_ISA_LEVEL 0  // 0 baseline, 1 avx2, 2 avx512 (kernels/CMakeLists.txt)
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

// Element types whose reductions (segment_reduce, scatter_reduce, spmm) get the
// AVX2 / AVX-512 copies: float only, what GNN features are. Each further type
// would add two more compiles of the most template-heavy files to every build,
// for types that are rarely hot; they run the baseline copy.
template <class T>
inline constexpr bool kIsaDispatchedElement = std::is_same_v<T, float>;

// dispatch_cpu_isa when kDispatched, else baseline() (the other levels' copies are
// then never instantiated, so never linked).
template <bool kDispatched, class Baseline, class Avx2, class Avx512>
decltype(auto) dispatch_cpu_isa_if(Baseline&& baseline, [[maybe_unused]] Avx2&& avx2,
                                   [[maybe_unused]] Avx512&& avx512) {
  if constexpr (kDispatched) {
    return dispatch_cpu_isa(baseline, avx2, avx512);
  } else {
    return baseline();
  }
}

}  // namespace edgewise

// The declarations in the argument, repeated in each level's namespace (at namespace
// scope, inside the kernel's detail namespace).
#define EW_DECLARE_PER_CPU_ISA(...)  \
  namespace isa_baseline {           \
  __VA_ARGS__                        \
  }                                  \
  namespace isa_avx2 {               \
  __VA_ARGS__                        \
  }                                  \
  namespace isa_avx512 {             \
  __VA_ARGS__                        \
  }

// Returns fn(args...) of the level cpu_isa() picks; fn is an entry point declared with
// EW_DECLARE_PER_CPU_ISA (template arguments deduced from args).
#define EW_DISPATCH_CPU_ISA(fn, ...)                                                    \
  ::edgewise::dispatch_cpu_isa([&]() -> decltype(auto) { return isa_baseline::fn(__VA_ARGS__); }, \
                               [&]() -> decltype(auto) { return isa_avx2::fn(__VA_ARGS__); },     \
                               [&]() -> decltype(auto) { return isa_avx512::fn(__VA_ARGS__); })

// EW_DISPATCH_CPU_ISA when the constant `dispatched` is true, else the baseline copy.
#define EW_DISPATCH_CPU_ISA_IF(dispatched, fn, ...)                                                 \
  ::edgewise::dispatch_cpu_isa_if<dispatched>(                                                   \
      [&]() -> decltype(auto) { return isa_baseline::fn(__VA_ARGS__); },                         \
      [&]() -> decltype(auto) { return isa_avx2::fn(__VA_ARGS__); },                             \
      [&]() -> decltype(auto) { return isa_avx512::fn(__VA_ARGS__); })
