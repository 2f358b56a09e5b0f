// The CPU dense ops compiled once per ISA level: the GEMM (gemm_cpu_isa.cpp) and
// dropout (dropout_cpu_isa.cpp), the two whose speed depends on vector width (Eigen's
// packet kernels; the Philox rounds' 32-bit multiplies). gnn/CMakeLists.txt builds
// them per level (edgewise_add_isa_variants).
//
// Each level's copy lives in its own namespace, and the GEMM includes Eigen under
// its own namespace name (Eigen_isa_<level>), so no inline function or template of
// one level can stand in for another's at link time; only plain pointers and sizes
// cross into them. Callers use EW_DISPATCH_CPU_ISA.
#pragma once

#include <cstdint>

#include "edgewise/kernels/cpu_isa_dispatch.hpp"

namespace edgewise::gnn::ops::cpu {

// Elementwise loops below this many elements run on one thread (fork/join costs more).
inline constexpr int64_t kParallelThreshold = 1 << 15;

// c [m, n] = alpha * op(a) @ op(b) + beta * c, all row-major and contiguous; a is
// stored [a_rows, a_cols] (op(a) = a or a^T), b likewise. beta == 0 ignores c's old
// contents, NaN included (BLAS semantics).
struct GemmArgs {
  const float* a;
  int64_t a_rows;
  int64_t a_cols;
  bool transpose_a;
  const float* b;
  int64_t b_rows;
  int64_t b_cols;
  bool transpose_b;
  float* c;
  int64_t c_rows;
  int64_t c_cols;
  float alpha;
  float beta;
};

EW_DECLARE_PER_CPU_ISA(void gemm(const GemmArgs& args);
                       // y[i] = x[i] / (1 - p) or 0 by DropoutMask(p, seed, stream) (dropout_core.hpp);
                       // x and y may be the same array.
                       void dropout(const float* x, float* y, int64_t n, float p, uint64_t seed,
                                    uint64_t stream);)

}  // namespace edgewise::gnn::ops::cpu
