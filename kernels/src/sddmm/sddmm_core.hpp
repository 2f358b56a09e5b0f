// sddmm per-element logic shared by the CPU and CUDA drivers (EW_HD).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::sddmm_detail {

// out[e, h] of the dot form: a fixed-order dot product over the D features of head h.
// From 16 features on, feature k goes to running sum k mod 8 (for the whole multiples of
// 8), the eight sums combine as a fixed tree, then the remaining features add in order;
// shorter rows are one running sum (measured no slower at D = 8). Vector units of
// any width (and a CUDA thread) follow this same order, so every CPU ISA level gives
// the same bits; a single running sum cannot vectorise without reordering.
// kD > 0 fixes the width at compile time (the CPU driver's common widths); 0: runtime d.
template <int64_t kD = 0, class T>
EW_HD_INLINE T dot_edge(const T* __restrict__ x_row, const T* __restrict__ y_row, int64_t d) {
  constexpr int64_t kLanes = 8;
  const int64_t n = kD > 0 ? kD : d;
  const int64_t body = n >= 2 * kLanes ? n - n % kLanes : 0;
  T acc = T(0);
  if (body > 0) {
    T lane[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) lane[j] = x_row[j] * y_row[j];
    for (int64_t k = kLanes; k < body; k += kLanes) {
      for (int64_t j = 0; j < kLanes; ++j) lane[j] += x_row[k + j] * y_row[k + j];
    }
    acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  }
  for (int64_t k = body; k < n; ++k) acc += x_row[k] * y_row[k];
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
