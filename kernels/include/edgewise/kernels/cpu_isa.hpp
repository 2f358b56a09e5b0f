// Runtime CPU ISA dispatch: the level the dispatched CPU kernels run at.
//
// The default build is portable (x86-64-v2 baseline). Selected CPU translation
// units (sort_by_key, run_length_encode, and for float elements segment_reduce,
// scatter_reduce, spmm and its backward) are compiled once per level, each
// into its own namespace (isa_baseline, isa_avx2, isa_avx512), and a dispatcher
// calls the one for cpu_isa(). Levels:
//   Baseline  x86-64-v2 (SSE4.2, POPCNT): every x86-64 CPU of the last 15 years.
//   Avx2      x86-64-v3 (AVX2, FMA, BMI2).
//   Avx512    x86-64-v4 (AVX-512 F/BW/CD/DQ/VL).
// cpu_isa() is fixed at first use: the best level both the build and the CPU
// (__builtin_cpu_supports) support, or the level EDGEWISE_CPU_ISA names
// (baseline|avx2|avx512), lowered to what is supported. Results are identical at
// every level (the kernels are integer or order-fixed, and the copies are compiled
// without FMA contraction); only speed differs.
// Builds without dispatch (EDGEWISE_NATIVE_ARCH=ON, non-x86 targets) support
// Baseline only: the one copy is compiled for the build's own flags.
#pragma once

#include <string>

namespace edgewise {

enum class CpuIsa : int { Baseline = 0, Avx2 = 1, Avx512 = 2 };

const char* to_string(CpuIsa isa);
// "baseline", "avx2", "avx512"; std::invalid_argument naming the value otherwise.
CpuIsa parse_cpu_isa(const std::string& name);

// The best level the build and this CPU support.
CpuIsa best_supported_cpu_isa();
// The level dispatched kernels use now.
CpuIsa cpu_isa();
// Forces a level (tests, benchmarks). Throws std::invalid_argument when this build or
// CPU cannot run it. Not meant to race with running kernels.
void set_cpu_isa(CpuIsa isa);

}  // namespace edgewise
