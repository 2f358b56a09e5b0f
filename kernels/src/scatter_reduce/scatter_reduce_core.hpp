// scatter_reduce logic shared by the CPU and CUDA drivers (EW_HD): the index
// range test and how an output element is written from what was accumulated.
//
// A "slot" is what an output element accumulates: Reducer's accumulator for
// sum/mean (float, int64 or uint64), the packed word of monotone.hpp for
// min/max. It starts at 0 either way (the sum identity and kPackedEmpty). The
// CUDA driver updates slots with atomics; the CPU driver keeps min/max as a key
// and a row and packs them into slots to merge and finalize.
#pragma once

#include <cstdint>
#include <type_traits>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/monotone.hpp"
#include "edgewise/kernels/common/reducer.hpp"

namespace edgewise::scatter_reduce_detail {

template <ReduceOp Op, class T>
using Slot = std::conditional_t<Op == ReduceOp::Min || Op == ReduceOp::Max, uint64_t,
                                typename Reducer<Op, T>::Acc>;

// Whether output `s` exists among `segments` (negative values fail too).
template <class I>
EW_HD_INLINE bool index_in_range(I s, int64_t segments) {
  return static_cast<uint64_t>(static_cast<int64_t>(s)) < static_cast<uint64_t>(segments);
}

// What element `v` of row `row` contributes to its output's slot: the packed
// word for min/max (the CUDA driver atomicMax-es it), the value widened to
// Reducer's accumulator for sum/mean (atomicAdd on CUDA, += on CPU).
template <ReduceOp Op, class T>
EW_HD_INLINE Slot<Op, T> slot_update(T v, int64_t row) {
  if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
    return extremum_word<Op>(v, row);
  } else {
    return static_cast<Slot<Op, T>>(v);
  }
}

// Merges two partial slots (for min/max the larger word; order does not matter).
template <ReduceOp Op, class T>
EW_HD_INLINE void slot_merge(Slot<Op, T>& slot, Slot<Op, T> other) {
  if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
    slot = other > slot ? other : slot;
  } else {
    slot += other;
  }
}

// Writes output element (s, c) from its final slot. Sum/mean: Reducer::finalize
// over `count` rows (mean only; sum passes any count > 0, its slot is 0 when no
// row came). Min/max: the winning value, decoded from the key (a random read of
// `values` per output would cost more than the whole fold at small M / S), read
// back from the winning row only for zeros and NaNs so that its bits are exact,
// and the row (or 0 and -1 when no row came).
template <ReduceOp Op, class T>
EW_HD_INLINE void slot_finalize(Slot<Op, T> slot, int64_t count, const T* values, int64_t cols, int64_t c,
                                T& out, int64_t& arg) {
  if constexpr (Op == ReduceOp::Min || Op == ReduceOp::Max) {
    const int64_t row = packed_row(slot);
    bool ambiguous = false;
    const T decoded = extremum_value<Op, T>(packed_key(slot), ambiguous);
    out = row < 0 ? T(0) : ambiguous ? values[row * cols + c] : decoded;
    arg = row;
  } else {
    out = Reducer<Op, T>::finalize(slot, count);
    arg = -1;
  }
}

}  // namespace edgewise::scatter_reduce_detail
