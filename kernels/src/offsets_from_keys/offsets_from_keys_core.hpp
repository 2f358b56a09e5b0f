// offsets_from_keys logic shared by the CPU and CUDA drivers: the key check, and a
// merge path over the segment boundaries 0..S and the sorted keys.
//
// Merge the S + 1 boundaries with the E keys so that boundary s comes before key k
// iff s <= k. Then boundary s is preceded by exactly the keys < s, i.e. offsets[s] is
// the number of keys consumed when the merge reaches boundary s. Any thread can
// find where a diagonal (a count of merged items) cuts both lists with one binary
// search, so the S + 1 + E items split into equal slices whatever the key
// distribution (one hub, long stretches of empty segments), each slice owning the
// offsets of its boundaries.
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

// Writes offsets[s] for the boundaries s among merged items [begin, end): [s0, s1).
// Within the slice: offsets[s0] starts at the keys consumed before it; every key k
// writes k + 1 at its key + 1 (the last key of a run leaves the run's end, i.e. the
// number of keys < key + 1, at the next segment's offset); segments no key ends
// before keep 0 and take their predecessor's offset in a running max. Branch-free
// per key (no data-dependent branch to mispredict at every run), and only
// offsets[s0, s1) is touched even for unsorted keys, so slices never overlap.
template <class K>
EW_HD_INLINE void write_offsets(const K* __restrict__ keys, int64_t num_keys, int64_t segments, int64_t begin,
                                int64_t end, int64_t* __restrict__ offsets) {
  const int64_t s0 = boundaries_before(keys, num_keys, segments, begin);
  const int64_t s1 = boundaries_before(keys, num_keys, segments, end);
  if (s0 == s1) return;
  const int64_t k0 = begin - s0;
  const int64_t k1 = end - s1;
  offsets[s0] = k0;
  for (int64_t s = s0 + 1; s < s1; ++s) offsets[s] = 0;
  for (int64_t k = k0; k < k1; ++k) {
    const int64_t target = static_cast<int64_t>(keys[k]) + 1;
    if (target >= s0 && target < s1) offsets[target] = k + 1;
  }
  for (int64_t s = s0 + 1; s < s1; ++s) offsets[s] = offsets[s] > offsets[s - 1] ? offsets[s] : offsets[s - 1];
}

}  // namespace edgewise::offsets_detail
