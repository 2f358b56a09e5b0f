// offsets_from_keys: sorted segment ids -> CSR offsets, empty segments included.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: E keys, S segments (S >= 0).
//
// keys     [E]      int32_t, int64_t or uint32_t segment ids, sorted (nondecreasing),
//                   each in [0, S) — e.g. the destination ids of an edge list after
//                   sort_by_key.
// offsets  [S + 1]  int64, overwritten: offsets[s] = number of keys < s, so segment s
//                   owns keys [offsets[s], offsets[s+1]); offsets[0] == 0,
//                   offsets[S] == E, and a segment no key names is empty
//                   (offsets[s] == offsets[s+1]). These are the offsets segment_reduce
//                   takes. S comes from offsets.size() - 1.
//
// Work is O(E + S), split evenly over threads by a merge path over the keys and the
// segment boundaries, so skew (one huge segment, long runs of empty segments) does
// not serialise a thread.
//
// All views must live on ctx.device(). With ctx.validate (the default) the keys are
// checked before anything is written: the first key that is out of range or smaller
// than its predecessor throws std::invalid_argument naming its position and value
// (e.g. "offsets_from_keys: keys[17] (12) must lie in [0, 10)"), and offsets is left
// exactly as it was. Without validation bad keys give meaningless offsets but never
// an access outside the views.
template <class K>
void offsets_from_keys(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx);

// The same on a per-thread default context for the keys' device.
template <class K>
void offsets_from_keys(VectorView<const K> keys, VectorView<int64_t> offsets);

#define EW_OFFSETS_FROM_KEYS_DECLARE(K)                                                                        \
  extern template void offsets_from_keys<K>(VectorView<const K>, VectorView<int64_t>, Context&);             \
  extern template void offsets_from_keys<K>(VectorView<const K>, VectorView<int64_t>);
EW_OFFSETS_FROM_KEYS_DECLARE(int32_t)
EW_OFFSETS_FROM_KEYS_DECLARE(int64_t)
EW_OFFSETS_FROM_KEYS_DECLARE(uint32_t)
#undef EW_OFFSETS_FROM_KEYS_DECLARE

}  // namespace edgewise
