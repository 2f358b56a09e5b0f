// The dropout mask, written once for CPU and CUDA: element i is kept when a
// Philox uniform keyed by (seed, stream, i) is >= p (one Philox block serves four
// consecutive elements), and kept values are scaled by 1 / (1 - p).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/philox.hpp"

namespace edgewise::gnn::ops {

class DropoutMask {
 public:
  EW_HD DropoutMask(float p, uint64_t seed, uint64_t stream)
      : p_(p), scale_(p < 1.0f ? 1.0f / (1.0f - p) : 0.0f), seed_(seed), stream_(stream) {}

  EW_HD_INLINE bool keep(int64_t i) const {
    const PhiloxBlock block = philox_block(seed_, stream_, static_cast<uint64_t>(i) >> 2);
    return uniform_float(block.v[i & 3]) >= p_;
  }
  EW_HD_INLINE float apply(float x, int64_t i) const { return keep(i) ? x * scale_ : 0.0f; }
  // x kept (scaled) or dropped by the uniform draw in `bits`.
  EW_HD_INLINE float select(uint32_t bits, float x) const { return uniform_float(bits) >= p_ ? x * scale_ : 0.0f; }

  // Elements [4 b, min(4 b + 4, n)) from one Philox block (the fast path).
  EW_HD_INLINE void apply_block(const float* x, float* y, int64_t b, int64_t n) const {
    const PhiloxBlock block = philox_block(seed_, stream_, static_cast<uint64_t>(b));
    const int64_t first = 4 * b;
    const int64_t count = n - first < 4 ? n - first : 4;
    for (int64_t j = 0; j < count; ++j) y[first + j] = select(block.v[j], x[first + j]);
  }

  EW_HD uint64_t seed() const { return seed_; }
  EW_HD uint64_t stream() const { return stream_; }

 private:
  float p_, scale_;
  uint64_t seed_, stream_;
};

}  // namespace edgewise::gnn::ops
