// scatter_reduce logic shared by the CPU and CUDA drivers (EW_HD): the index
// range test and how an output element is written from what was accumulated.
//
// A "slot" is what an output element accumulates: Reducer's accumulator (float,
// double, int64 or uint64) for Add and CasLoop ops, the packed word of
// monotone.hpp for PackedExtremum ops (min/max) of 32-bit types. The CUDA driver
// updates slots with atomics (atomicAdd, an atomicCAS loop, atomicMax); the CPU
// driver keeps per-thread partials, min/max as a key and a row.
//
// double min/max: a 64-bit key leaves no room for the row in one word, so both
// drivers resolve it as a (key, row) pair: the larger key wins, equal keys go to
// the lower row (extremum_pair_beats). The CPU folds rows in order into such a
// pair; the CUDA driver runs two lock-free passes over the elements: an atomicMax
// of the key per output, then an atomicMin of the row over the elements whose key
// equals the winner (extremum_row_candidate), which is the same winner.
#pragma once

#include <cstdint>
#include <type_traits>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/monotone.hpp"
#include "edgewise/kernels/common/reducer.hpp"

namespace edgewise::scatter_reduce_detail {

template <ReduceOp Op>
inline constexpr bool kPackedExtremum = Reducer<Op, float>::kScatter == ScatterKind::PackedExtremum;

template <ReduceOp Op, class T>
using Slot = std::conditional_t<kPackedExtremum<Op>, uint64_t, typename Reducer<Op, T>::Acc>;

// What element `v` of row `row` contributes to its output's slot: the packed
// word for PackedExtremum ops (the CUDA driver atomicMax-es it), the value widened
// to Reducer's accumulator otherwise (atomicAdd for Add ops on CUDA).
template <ReduceOp Op, class T>
EW_HD_INLINE Slot<Op, T> slot_update(T v, int64_t row) {
  if constexpr (kPackedExtremum<Op>) {
    return extremum_word<Op>(v, row);
  } else {
    return static_cast<Slot<Op, T>>(v);
  }
}

// Merges two partial slots (packed words: the larger; otherwise the op's merge).
template <ReduceOp Op, class T>
EW_HD_INLINE void slot_merge(Slot<Op, T>& slot, Slot<Op, T> other) {
  if constexpr (kPackedExtremum<Op>) {
    slot = other > slot ? other : slot;
  } else {
    int64_t no_arg = -1;
    Reducer<Op, T>::template combine<false>(slot, no_arg, other, -1);
  }
}

// Whether (key, row) beats (best_key, best_row) in a min/max: a larger key, or an
// equal key and a lower row. Rows are unsigned, and "no row yet" is the largest
// row value, so any real element beats an empty pair with the same key.
template <class K, class Row>
EW_HD_INLINE bool extremum_pair_beats(K key, Row row, K best_key, Row best_row) {
  return key > best_key || (key == best_key && row < best_row);
}

// Second CUDA pass of double min/max: whether element `v` holds the winning key of
// its output (so its row competes for the lowest row among the winners).
template <ReduceOp Op, class T>
EW_HD_INLINE bool extremum_row_candidate(T v, MonotoneKey<T> winning_key) {
  return extremum_key<Op>(v) == winning_key;
}

// Writes a min/max output element from its winning key and row (row < 0: no row
// came, so 0 and -1): the value decoded from the key, read back from the winning
// row only for zeros and NaNs so that its bits are exact. Element (row, c) of the
// values lies at values[row * row_stride + c * col_stride] (row-major [M, C]:
// strides C and 1; given transposed, [C, M]: 1 and M).
template <ReduceOp Op, class T>
EW_HD_INLINE void extremum_finalize(MonotoneKey<T> key, int64_t row, const T* values, int64_t row_stride,
                                    int64_t col_stride, int64_t c, T& out, int64_t& arg) {
  bool ambiguous = false;
  const T decoded = extremum_value<Op, T>(key, ambiguous);
  out = row < 0 ? T(0) : ambiguous ? values[row * row_stride + c * col_stride] : decoded;
  arg = row;
}

// The same on row-major values [M, cols].
template <ReduceOp Op, class T>
EW_HD_INLINE void extremum_finalize(MonotoneKey<T> key, int64_t row, const T* values, int64_t cols, int64_t c,
                                    T& out, int64_t& arg) {
  extremum_finalize<Op, T>(key, row, values, cols, int64_t{1}, c, out, arg);
}

// Writes output element (s, c) from its final slot. Accumulator slots:
// Reducer::finalize over `count` rows (only ops with kFinalizeUsesCount count them;
// the others get 1). Packed words: the winning value, decoded from the key (a random read of
// `values` per output would cost more than the whole fold at small M / S), read
// back from the winning row only for zeros and NaNs so that its bits are exact,
// and the row (or 0 and -1 when no row came).
template <ReduceOp Op, class T>
EW_HD_INLINE void slot_finalize(Slot<Op, T> slot, int64_t count, const T* values, int64_t row_stride,
                                int64_t col_stride, int64_t c, T& out, int64_t& arg) {
  if constexpr (kPackedExtremum<Op>) {
    extremum_finalize<Op, T>(packed_key(slot), packed_row(slot), values, row_stride, col_stride, c, out, arg);
  } else {
    out = Reducer<Op, T>::finalize(slot, count);
    arg = -1;
  }
}

// The same on row-major values [M, cols].
template <ReduceOp Op, class T>
EW_HD_INLINE void slot_finalize(Slot<Op, T> slot, int64_t count, const T* values, int64_t cols, int64_t c,
                                T& out, int64_t& arg) {
  slot_finalize<Op, T>(slot, count, values, cols, int64_t{1}, c, out, arg);
}

}  // namespace edgewise::scatter_reduce_detail
