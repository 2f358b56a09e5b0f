// Reducer<Op, T>: the per-element reduction math that every backend of
// segment_reduce, scatter_reduce and spmm runs, written once (EW_HD).
//
// Semantics shared by all of them:
//  - sum/mean accumulate float in float, int32 in int64, uint32 in uint64; an int32
//    sum wraps modulo 2^32 on output; an integer mean truncates toward zero.
//  - min/max: NaN beats every number (it propagates), among equals the lower row
//    wins; an empty reduction writes 0 and arg -1.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise {

template <class T>
struct SumAccumulator {
  using type = T;
};
template <>
struct SumAccumulator<int32_t> {
  using type = int64_t;
};
template <>
struct SumAccumulator<uint32_t> {
  using type = uint64_t;
};

template <class T>
EW_HD_INLINE bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

template <ReduceOp Op, class T>
struct Reducer {
  static constexpr bool kExtremum = Op == ReduceOp::Min || Op == ReduceOp::Max;
  using Acc = std::conditional_t<kExtremum, T, typename SumAccumulator<T>::type>;

  // The neutral start (sum: 0; max: lowest; min: highest, infinities for floats).
  EW_HD_INLINE static Acc identity() {
    if constexpr (!kExtremum) {
      return Acc(0);
    } else if constexpr (std::is_floating_point_v<T>) {
      return Op == ReduceOp::Max ? -std::numeric_limits<T>::infinity()
                                 : std::numeric_limits<T>::infinity();
    } else {
      return Op == ReduceOp::Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }

  // Extremum ops: whether `v` replaces `acc` (strictly better; NaN beats numbers).
  EW_HD_INLINE static bool better(T v, T acc) {
    if constexpr (Op == ReduceOp::Max) {
      return v > acc || (is_nan(v) && !is_nan(acc));
    } else {
      return v < acc || (is_nan(v) && !is_nan(acc));
    }
  }

  // Fold one element without tracking its row (the fast path when no arg is asked).
  EW_HD_INLINE static void accumulate(Acc& acc, T v) {
    if constexpr (kExtremum) {
      // Same value as better(v, acc), but only one compare depends on acc: a NaN
      // acc is kept because no comparison with it is true.
      const bool wins = Op == ReduceOp::Max ? v > acc : v < acc;
      acc = (wins || is_nan(v)) ? v : acc;
    } else {
      acc += static_cast<Acc>(v);
    }
  }

  // Extremum fold that skips NaN: one compare-select on the accumulator's chain
  // (a max/min instruction), so wide CPU loops stay at memory speed. Callers
  // that use it track NaN on their own (is_nan, off the chain) and restore the
  // NaN-propagating result afterwards.
  EW_HD_INLINE static void accumulate_skipping_nan(Acc& acc, T v) {
    static_assert(kExtremum, "accumulate_skipping_nan is for min and max");
    acc = (Op == ReduceOp::Max ? v > acc : v < acc) ? v : acc;
  }

  // Fold element `v` of row `row`; rows must arrive in increasing order, and
  // `arg` is -1 while nothing has been folded.
  EW_HD_INLINE static void accumulate(Acc& acc, int64_t& arg, T v, int64_t row) {
    if constexpr (kExtremum) {
      if (arg < 0 || better(v, acc)) {
        acc = v;
        arg = row;
      }
    } else {
      acc += static_cast<Acc>(v);
      arg = row;
    }
  }

  // Merge a partial (acc_b, arg_b) into (acc, arg), whatever their row order:
  // equal values resolve to the lower row, so merging is deterministic.
  EW_HD_INLINE static void merge(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    if constexpr (kExtremum) {
      if (arg_b < 0) return;
      if (arg < 0 || better(acc_b, acc) || (!better(acc, acc_b) && arg_b < arg)) {
        acc = acc_b;
        arg = arg_b;
      }
    } else {
      acc += acc_b;
      arg = arg > arg_b ? arg : arg_b;
    }
  }

  // Merge a partial covering other rows. With kTrackArg false the args are not
  // maintained (all -1): extremum partials then merge by value alone, and a
  // partial that saw no rows holds identity(), which never beats a real value.
  template <bool kTrackArg>
  EW_HD_INLINE static void combine(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    if constexpr (kTrackArg) {
      merge(acc, arg, acc_b, arg_b);
    } else if constexpr (kExtremum) {
      acc = better(acc_b, acc) ? acc_b : acc;
    } else {
      acc += acc_b;
    }
  }

  // The output value of a reduction over `count` elements (0 when count == 0).
  EW_HD_INLINE static T finalize(Acc acc, int64_t count) {
    if (count == 0) return T(0);
    if constexpr (Op == ReduceOp::Mean) {
      return static_cast<T>(acc / static_cast<Acc>(count));  // integers truncate
    } else {
      return static_cast<T>(acc);
    }
  }
};

}  // namespace edgewise
