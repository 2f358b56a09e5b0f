// edge_softmax per-segment logic shared by the CPU and CUDA drivers (EW_HD): an online
// max with a rescaled sum of exponentials, so one pass over a segment (or one pass per
// lane, then a merge) gives both the max and the normaliser without overflow.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::edge_softmax_detail {

template <class T>
EW_HD_INLINE T exp_of(T x) {
  if constexpr (sizeof(T) == 4) {
    return expf(x);
  } else {
    return exp(x);
  }
}

// sum == sum over the values seen of exp(s - max). Empty: max = -inf, sum = 0.
template <class T>
struct SoftmaxState {
  T max = -std::numeric_limits<T>::infinity();
  T sum = T(0);

  EW_HD_INLINE void add(T s) {
    if (s > max) {
      sum = sum * exp_of(max - s) + T(1);
      max = s;
    } else {
      sum += exp_of(s - max);  // NaN s (or all -inf) makes sum NaN, as documented
    }
  }

  EW_HD_INLINE void merge(const SoftmaxState& other) {
    if (other.sum == T(0)) return;  // empty: nothing to add (and exp(-inf - -inf) is NaN)
    if (sum == T(0)) {
      *this = other;
    } else if (other.max > max) {
      sum = sum * exp_of(max - other.max) + other.sum;
      max = other.max;
    } else {
      sum += other.sum * exp_of(other.max - max);
    }
  }

  EW_HD_INLINE T probability(T s) const { return exp_of(s - max) / sum; }
};

}  // namespace edgewise::edge_softmax_detail
