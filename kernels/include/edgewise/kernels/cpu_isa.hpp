// Runtime CPU ISA dispatch: the level the dispatched CPU code runs at.
//
// The default build is portable (x86-64-v2 baseline). Selected CPU translation
// units (kernels: sort_by_key, run_length_encode, and for float elements
// segment_reduce, scatter_reduce, spmm and its backward, edge_softmax; engine: the dense GEMM and
// dropout) are compiled once per level, each into its own namespace (isa_baseline,
// isa_avx2, isa_avx512, isa_avx512zmm), and a dispatcher calls the one for cpu_isa()
// (cpu_isa_dispatch.hpp). Levels:
//   Baseline  x86-64-v2 (SSE4.2, POPCNT): every x86-64 CPU of the last 15 years.
//   Avx2      x86-64-v3 (AVX2, FMA, BMI2).
//   Avx512    x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), compiled for 256-bit vectors.
//   Avx512Zmm the same instructions, compiled for 512-bit vectors.
// On an AVX-512 CPU both AVX-512 copies run; the default is Avx512Zmm on Intel and
// Avx512 elsewhere (AMD Zen 4 executes 512-bit operations as two halves: the
// scatter_reduce max fold measured 1.3-1.6x slower with them on an EPYC, while on a
// Xeon the 512-bit copy is 1.09x faster over the kernel benchmarks).
// cpu_isa() is fixed at first use: the best level both the build and the CPU
// (__builtin_cpu_supports) support, or the level EDGEWISE_CPU_ISA names
// (baseline|avx2|avx512|avx512zmm), lowered to what is supported. The kernels' results and
// dropout's are identical at every level (integer or order-fixed, and the kernels'
// copies are compiled without FMA contraction); only speed differs. The GEMM uses
// FMA where the level has it, so its results (and so a training run's) may differ
// in the last bits between levels, as a BLAS library's do; pin a level with
// EDGEWISE_CPU_ISA to reproduce a run on another CPU.
// Builds without dispatch (EDGEWISE_NATIVE_ARCH=ON, non-x86 targets) support
// Baseline only: the one copy is compiled for the build's own flags.
#pragma once

#include <string>

namespace edgewise {

enum class CpuIsa : int { Baseline = 0, Avx2 = 1, Avx512 = 2, Avx512Zmm = 3 };

const char* to_string(CpuIsa isa);
// "baseline", "avx2", "avx512", "avx512zmm"; std::invalid_argument naming the value otherwise.
CpuIsa parse_cpu_isa(const std::string& name);

// The highest level the build and this CPU support (every level up to it runs).
CpuIsa best_supported_cpu_isa();
// The level used unless EDGEWISE_CPU_ISA or set_cpu_isa say otherwise: the best
// supported, with Avx512 instead of Avx512Zmm on CPUs other than Intel's.
CpuIsa default_cpu_isa();
// The level dispatched kernels use now.
CpuIsa cpu_isa();
// Forces a level (tests, benchmarks). Throws std::invalid_argument when this build or
// CPU cannot run it. Not meant to race with running kernels.
void set_cpu_isa(CpuIsa isa);

}  // namespace edgewise
