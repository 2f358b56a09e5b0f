// sddmm per-element logic shared by the CPU and CUDA drivers (EW_HD).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::sddmm_detail {

// out[e, h] of the dot form: a fixed-order dot product over the D features of head h.
// kD > 0 fixes the width at compile time (the CPU driver's common widths); 0: runtime d.
template <int64_t kD = 0, class T>
EW_HD_INLINE T dot_edge(const T* __restrict__ x_row, const T* __restrict__ y_row, int64_t d) {
  const int64_t n = kD > 0 ? kD : d;
  T acc = T(0);
  for (int64_t k = 0; k < n; ++k) acc += x_row[k] * y_row[k];
  return acc;
}

// The inputs of edge_gather_sum (see sddmm.hpp); x == nullptr means x = 1 and D = 1.
template <class T, class I>
struct GatherSum {
  const int64_t* offsets = nullptr;
  const I* indices = nullptr;
  const int64_t* edge_ids = nullptr;  // null: edge k's weight row is k
  const T* w = nullptr;
  int64_t heads = 1;
  const T* x = nullptr;
  int64_t d = 1;  // features per head (out has heads * d columns)

  // One output element, summed in edge order (the order both backends use).
  EW_HD_INLINE T element(int64_t v, int64_t col) const {
    const int64_t h = col / d;
    const int64_t cols = heads * d;
    T acc = T(0);
    for (int64_t k = offsets[v]; k < offsets[v + 1]; ++k) {
      const int64_t id = edge_ids != nullptr ? edge_ids[k] : k;
      const T wk = w[id * heads + h];
      acc += x != nullptr ? wk * x[static_cast<int64_t>(indices[k]) * cols + col] : wk;
    }
    return acc;
  }
};

}  // namespace edgewise::sddmm_detail
