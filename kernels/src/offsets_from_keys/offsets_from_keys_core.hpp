// offsets_from_keys logic shared by the CPU and CUDA drivers: the key check, and a
// merge path over the segment boundaries 0..S and the sorted keys.
//
// Merge the S + 1 boundaries with the E keys so that boundary s comes before key k
// iff s <= k. Then boundary s is preceded by exactly the keys < s, i.e. offsets[s] is
// the number of keys consumed when the merge reaches boundary s. Any thread can
// start at any diagonal (a count of merged items) after one binary search, so the
// S + 1 + E items split evenly over threads whatever the key distribution.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::offsets_detail {

enum class KeyStatus : int { Ok = 0, OutOfRange = 1, Decreasing = 2 };

// Whether keys[i] is a valid segment id in [0, S) not below keys[i - 1].
template <class K>
EW_HD_INLINE KeyStatus key_status(const K* keys, int64_t i, int64_t segments) {
  const int64_t key = static_cast<int64_t>(keys[i]);
  if (key < 0 || key >= segments) return KeyStatus::OutOfRange;
  if (i > 0 && keys[i] < keys[i - 1]) return KeyStatus::Decreasing;
  return KeyStatus::Ok;
}

// The number of boundaries among the first `diagonal` merged items (0 <= diagonal
// <= S + 1 + E).
template <class K>
EW_HD_INLINE int64_t boundaries_before(const K* keys, int64_t num_keys, int64_t segments, int64_t diagonal) {
  int64_t lo = diagonal > num_keys ? diagonal - num_keys : 0;
  int64_t hi = diagonal < segments + 1 ? diagonal : segments + 1;
  while (lo < hi) {
    // Boundary `mid` is among the first `diagonal` items iff it precedes key
    // diagonal - mid - 1 (which lies in [0, E) for mid in [lo, hi)).
    const int64_t mid = lo + (hi - lo) / 2;
    if (mid <= static_cast<int64_t>(keys[diagonal - mid - 1])) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Walks merged items [begin, end): each boundary s met writes offsets[s]. Only
// offsets[0..S] and keys[0..E) are touched, even for unsorted keys.
template <class K>
EW_HD_INLINE void write_offsets(const K* keys, int64_t num_keys, int64_t segments, int64_t begin, int64_t end,
                                int64_t* offsets) {
  int64_t s = boundaries_before(keys, num_keys, segments, begin);
  int64_t k = begin - s;
  for (int64_t d = begin; d < end; ++d) {
    if (s <= segments && (k >= num_keys || s <= static_cast<int64_t>(keys[k]))) {
      offsets[s] = k;
      ++s;
    } else {
      ++k;
    }
  }
}

}  // namespace edgewise::offsets_detail
