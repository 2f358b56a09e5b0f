// Calling the copy of a function compiled for the running CPU's ISA level.
//
// A library that compiles a translation unit once per level (kernels/ and gnn/
// CMakeLists: EDGEWISE_ISA_LEVELS) puts that file's code in a per-level namespace
// (isa_baseline / isa_avx2 / isa_avx512 / isa_avx512zmm, passed in as a macro), declares its entry
// points once per level with EW_DECLARE_PER_CPU_ISA, and calls them through
// EW_DISPATCH_CPU_ISA, which picks the copy for cpu_isa(). Such a library defines
// EDGEWISE_CPU_DISPATCH to 1 when it compiled the AVX2 and AVX-512 copies and to 0
// when it compiled only the baseline one (the others' declarations are then never
// called, so never linked).
#pragma once

#include "edgewise/kernels/cpu_isa.hpp"

#ifndef EDGEWISE_CPU_DISPATCH
#define EDGEWISE_CPU_DISPATCH 0
#endif

namespace edgewise {

// Calls baseline(), avx2(), avx512() or avx512zmm() for cpu_isa().
template <class Baseline, class Avx2, class Avx512, class Avx512Zmm>
decltype(auto) dispatch_cpu_isa([[maybe_unused]] Baseline&& baseline, [[maybe_unused]] Avx2&& avx2,
                                [[maybe_unused]] Avx512&& avx512, [[maybe_unused]] Avx512Zmm&& avx512zmm) {
#if EDGEWISE_CPU_DISPATCH
  switch (cpu_isa()) {
    case CpuIsa::Avx512Zmm: return avx512zmm();
    case CpuIsa::Avx512: return avx512();
    case CpuIsa::Avx2: return avx2();
    case CpuIsa::Baseline: break;
  }
#endif
  return baseline();
}

// dispatch_cpu_isa when kDispatched, else baseline() (the other levels' copies are
// then never instantiated, so never linked).
template <bool kDispatched, class Baseline, class Avx2, class Avx512, class Avx512Zmm>
decltype(auto) dispatch_cpu_isa_if(Baseline&& baseline, [[maybe_unused]] Avx2&& avx2,
                                   [[maybe_unused]] Avx512&& avx512, [[maybe_unused]] Avx512Zmm&& avx512zmm) {
  if constexpr (kDispatched) {
    return dispatch_cpu_isa(baseline, avx2, avx512, avx512zmm);
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
  }                                  \
  namespace isa_avx512zmm {          \
  __VA_ARGS__                        \
  }

// Returns fn(args...) of the level cpu_isa() picks; fn is an entry point declared with
// EW_DECLARE_PER_CPU_ISA (template arguments deduced from args).
#define EW_DISPATCH_CPU_ISA(fn, ...)                                                    \
  ::edgewise::dispatch_cpu_isa([&]() -> decltype(auto) { return isa_baseline::fn(__VA_ARGS__); }, \
                               [&]() -> decltype(auto) { return isa_avx2::fn(__VA_ARGS__); },     \
                               [&]() -> decltype(auto) { return isa_avx512::fn(__VA_ARGS__); },  \
                               [&]() -> decltype(auto) { return isa_avx512zmm::fn(__VA_ARGS__); })

// EW_DISPATCH_CPU_ISA when the constant `dispatched` is true, else the baseline copy.
#define EW_DISPATCH_CPU_ISA_IF(dispatched, fn, ...)                                                 \
  ::edgewise::dispatch_cpu_isa_if<dispatched>(                                                   \
      [&]() -> decltype(auto) { return isa_baseline::fn(__VA_ARGS__); },                         \
      [&]() -> decltype(auto) { return isa_avx2::fn(__VA_ARGS__); },                             \
      [&]() -> decltype(auto) { return isa_avx512::fn(__VA_ARGS__); },                           \
      [&]() -> decltype(auto) { return isa_avx512zmm::fn(__VA_ARGS__); })
