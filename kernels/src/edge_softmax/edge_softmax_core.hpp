// edge_softmax per-(row, head) logic shared by the CPU and CUDA drivers (EW_HD): two
// passes, the max, then the sum of exp(s - max), so nothing overflows. A NaN score is
// skipped by the max and reaches the sum through its exp; a +inf max gives
// exp(inf - inf) = NaN: either way, and for an all -inf head (-inf - -inf), the
// head's probabilities are NaN, as torch.softmax's.
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

// The running max of a head's scores, from softmax_max_identity<T>() (NaN never wins).
template <class T>
EW_HD_INLINE T softmax_max_identity() {
  return -std::numeric_limits<T>::infinity();
}
template <class T>
EW_HD_INLINE T softmax_max(T max, T s) {
  return s > max ? s : max;
}

}  // namespace edgewise::edge_softmax_detail
