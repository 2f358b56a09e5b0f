// Binary searches over sorted arrays that CPU and CUDA threads both run (EW_HD).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise {

// First index i in [first, last) with a[i] >= key (last if none).
template <class T, class K>
EW_HD_INLINE int64_t lower_bound_index(const T* a, int64_t first, int64_t last, K key) {
  while (first < last) {
    int64_t mid = first + (last - first) / 2;
    if (a[mid] < key) {
      first = mid + 1;
    } else {
      last = mid;
    }
  }
  return first;
}

// First index i in [first, last) with a[i] > key (last if none).
template <class T, class K>
EW_HD_INLINE int64_t upper_bound_index(const T* a, int64_t first, int64_t last, K key) {
  while (first < last) {
    int64_t mid = first + (last - first) / 2;
    if (!(key < a[mid])) {
      first = mid + 1;
    } else {
      last = mid;
    }
  }
  return first;
}

}  // namespace edgewise
