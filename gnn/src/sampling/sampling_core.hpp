// Per-draw randomness of the samplers, written once (EW_HD) so a GPU sampler would
// draw exactly what the CPU one does: Philox blocks keyed by (seed, stream, node, draw).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/philox.hpp"

namespace edgewise::gnn::sampling {

// The Philox counter of the block that holds draws 2p and 2p + 1 of `node`: nodes are
// < 2^31 and a node makes fewer than 2^33 draws, so (node, p) never collide.
EW_HD_INLINE uint64_t draw_counter(uint32_t node, uint64_t pair) {
  return (static_cast<uint64_t>(node) << 32) | pair;
}

// floor(r * n / 2^64) for the 64-bit word `half` (0 or 1) of `block`: uniform in
// [0, n) with bias below n / 2^64 (multiply-shift, no division, no rejection loop).
EW_HD_INLINE uint64_t draw_below(const PhiloxBlock& block, int half, uint64_t n) {
  const uint64_t r = (static_cast<uint64_t>(block.v[2 * half]) << 32) | block.v[2 * half + 1];
#ifdef __CUDA_ARCH__
  return __umul64hi(r, n);
#else
  __extension__ typedef unsigned __int128 U128;  // __extension__ keeps -Wpedantic quiet
  return static_cast<uint64_t>((static_cast<U128>(r) * n) >> 64);
#endif
}

// Draw `step` (0-based) of Floyd's algorithm choosing k of d items for `node`:
// uniform in [0, j] with j = d - k + step. `block` caches the Philox block of the
// current pair of steps; the caller refreshes it on even steps (refresh_block).
EW_HD_INLINE PhiloxBlock refresh_block(uint64_t seed, uint64_t stream, uint32_t node, uint64_t step) {
  return philox_block(seed, stream, draw_counter(node, step >> 1));
}
EW_HD_INLINE uint64_t floyd_draw(const PhiloxBlock& block, uint64_t step, uint64_t j) {
  return draw_below(block, static_cast<int>(step & 1), j + 1);
}

}  // namespace edgewise::gnn::sampling
