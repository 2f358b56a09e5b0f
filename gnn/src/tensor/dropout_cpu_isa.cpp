// Dropout on the CPU at one ISA level (compiled once per level with EW_CPU_ISA_NS =
// isa_<level> and the level's -march; gnn/CMakeLists.txt). Every level draws the
// same Philox bits and scales without FMA, so the result is the same bit for bit.
#include <omp.h>

#include <algorithm>
#include "edgewise/gnn/tensor/dropout_core.hpp"
#include "tensor/isa_ops_cpu.hpp"

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#endif

namespace edgewise::gnn::ops::cpu::EW_CPU_ISA_NS {

namespace {
// Blocks [b0, b0 + G), all inside the input: the G Philox blocks are computed side by
// side so the CPU runs them in vector lanes (one block at a time is scalar, and
// dropout over a [1M, 64] activation then costs more than the spmm). Local to this
// level's copy: a shared inline template would be emitted by every level and the
// linker would keep one of them for all.
template <int G>
void apply_blocks(const DropoutMask& mask, const float* x, float* y, int64_t b0) {
  const uint64_t seed = mask.seed(), stream = mask.stream();
  uint32_t bits[4][G];
#pragma omp simd
  for (int k = 0; k < G; ++k) {
    const PhiloxBlock block = philox_block(seed, stream, static_cast<uint64_t>(b0 + k));
    for (int j = 0; j < 4; ++j) bits[j][k] = block.v[j];
  }
  const int64_t first = 4 * b0;
  for (int k = 0; k < G; ++k) {
    for (int j = 0; j < 4; ++j) y[first + 4 * k + j] = mask.select(bits[j][k], x[first + 4 * k + j]);
  }
}
}  // namespace

void dropout(const float* x, float* y, int64_t n, float p, uint64_t seed, uint64_t stream) {
  const int64_t blocks = (n + 3) / 4;
  const DropoutMask mask(p, seed, stream);
  constexpr int kGroup = 16;                     // Philox blocks per vector step
  const int64_t groups = (blocks + kGroup - 1) / kGroup;
  const int64_t full_groups = (n / 4) / kGroup;  // groups whose 64 elements all exist
#pragma omp parallel for if (n > kParallelThreshold)
  for (int64_t g = 0; g < groups; ++g) {
    if (g < full_groups) {
      apply_blocks<kGroup>(mask, x, y, g * kGroup);
    } else {
      for (int64_t b = g * kGroup; b < std::min(blocks, (g + 1) * kGroup); ++b) mask.apply_block(x, y, b, n);
    }
  }
}

}  // namespace edgewise::gnn::ops::cpu::EW_CPU_ISA_NS
