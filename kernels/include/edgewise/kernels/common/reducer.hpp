// Reducer<Op, T>: the reduction ops as traits, one specialisation per op of the
// list in reduce_op.hpp. Every backend of segment_reduce, scatter_reduce and spmm
// (CPU and CUDA, forward and backward) runs an op only through these members, so
// the math is written once (EW_HD) and no driver names an op.
//
// A trait defines:
//   Acc                      the accumulator (a number, or a struct)
//   kHasArg                  whether an arg output (winning row / edge) exists
//   kNanSkippingFold         whether accumulate_skipping_nan exists (a min/max fast path)
//   kLongChain               whether a fold step is slower than an add (CPU interleaves more lanes)
//   kFinalizeUsesCount       whether finalize needs the element count (scatter then counts rows)
//   kScatter                 how scatter_reduce combines into an output it does not own:
//                              Add             atomicAdd on CUDA (partials += on CPU)
//                              PackedExtremum  atomicMax of a (key << 32 | ~row) word (common/monotone.hpp)
//                              CasLoop         an atomicCAS loop applying merge (CPU: per-thread partials)
//   kBackward                the gradient of one element (message) m of an output y:
//                              Sum      dy/dm = 1
//                              Mean     dy/dm = 1 / count
//                              Arg      dy/dm = 1 where arg picked m, else 0
//                              Product  dy/dm = y / m (torch_scatter's; inf/NaN for m == 0)
//   identity()               the accumulator of no elements
//   accumulate(acc, v)       fold one element (no arg tracked)
//   accumulate(acc, arg, v, row)  fold element v of `row` (rows in increasing order)
//   merge(acc, arg, b, arg_b)     merge a partial over other rows, deterministically
//   combine<kTrackArg>(...)  merge when args are (or are not) tracked
//   finalize(acc, count)     the output value of `count` elements
//
// Adding an op touches three files:
//   1. this file: a Reducer<ReduceOp::NewOp, T> specialisation with the members above;
//   2. reduce_op.hpp: one line X(NewOp, "name", "alias") in EW_REDUCE_OPS;
//   3. kernels/reference/segment_reduce_ref.hpp: the op in the float64/long double oracle.
// Drivers, Python names and the tests' op lists follow from the list. A backward
// rule or scatter kind that a driver does not implement is rejected at compile
// time (static_assert) or, for backward entry points, with std::invalid_argument.
//
// Semantics shared by all of them:
//  - sum/mean/mul accumulate float in float, int32 in int64, uint32 in uint64; an
//    int32 sum or product wraps modulo 2^32 on output; an integer mean truncates.
//  - min/max: NaN beats every number (it propagates), among equals the lower row
//    wins; an empty reduction writes 0 and arg -1.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "edgewise/kernels/common/float_bits.hpp"
#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise {

enum class ScatterKind { Add, PackedExtremum, CasLoop };
enum class BackwardRule { Sum, Mean, Arg, Product };

// The integer accumulators are 64-bit: sums and products modulo 2^64 truncate to
// the same 32-bit result as wrapping 32-bit arithmetic would give.
template <class T>
struct WideAccumulator {
  using type = T;
};
template <>
struct WideAccumulator<int32_t> {
  using type = int64_t;
};
template <>
struct WideAccumulator<uint32_t> {
  using type = uint64_t;
};
template <class T>
using SumAccumulator = WideAccumulator<T>;

// No primary definition: an op in the list without a trait does not compile.
template <ReduceOp Op, class T>
struct Reducer;

// The members an op whose arg is meaningless shares: the arg is carried as the
// last row folded (so merges stay well-defined) and never reported.
template <class Derived, class AccT>
struct ArglessReducer {
  using Acc = AccT;
  static constexpr bool kHasArg = false;
  static constexpr bool kNanSkippingFold = false;
  static constexpr bool kLongChain = false;

  template <class T>
  EW_HD_INLINE static void accumulate(Acc& acc, int64_t& arg, T v, int64_t row) {
    Derived::accumulate(acc, v);
    arg = row;
  }
  EW_HD_INLINE static void merge(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    Derived::merge_values(acc, acc_b);
    arg = arg > arg_b ? arg : arg_b;
  }
  template <bool kTrackArg>
  EW_HD_INLINE static void combine(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    if constexpr (kTrackArg) {
      merge(acc, arg, acc_b, arg_b);
    } else {
      Derived::merge_values(acc, acc_b);
    }
  }
};

// sum and mean: a running (wide) sum.
template <class Derived, class T>
struct AddReducer : ArglessReducer<Derived, typename WideAccumulator<T>::type> {
  using Acc = typename WideAccumulator<T>::type;
  static constexpr ScatterKind kScatter = ScatterKind::Add;
  EW_HD_INLINE static Acc identity() { return Acc(0); }
  EW_HD_INLINE static void accumulate(Acc& acc, T v) { acc += static_cast<Acc>(v); }
  EW_HD_INLINE static void merge_values(Acc& acc, Acc b) { acc += b; }
  using ArglessReducer<Derived, Acc>::accumulate;
};

template <class T>
struct Reducer<ReduceOp::Sum, T> : AddReducer<Reducer<ReduceOp::Sum, T>, T> {
  using Acc = typename WideAccumulator<T>::type;
  static constexpr bool kFinalizeUsesCount = false;
  static constexpr BackwardRule kBackward = BackwardRule::Sum;
  EW_HD_INLINE static T finalize(Acc acc, int64_t) { return static_cast<T>(acc); }
};

template <class T>
struct Reducer<ReduceOp::Mean, T> : AddReducer<Reducer<ReduceOp::Mean, T>, T> {
  using Acc = typename WideAccumulator<T>::type;
  static constexpr bool kFinalizeUsesCount = true;
  static constexpr BackwardRule kBackward = BackwardRule::Mean;
  EW_HD_INLINE static T finalize(Acc acc, int64_t count) {
    if (count == 0) return T(0);
    return static_cast<T>(acc / static_cast<Acc>(count));  // integers truncate
  }
};

// min and max: the best value and its row. kMax picks the larger.
template <bool kMax, class T>
struct ExtremumReducer {
  using Acc = T;
  static constexpr bool kHasArg = true;
  static constexpr bool kNanSkippingFold = std::is_floating_point_v<T>;
  static constexpr bool kLongChain = true;
  static constexpr bool kFinalizeUsesCount = false;
  static constexpr ScatterKind kScatter = ScatterKind::PackedExtremum;
  static constexpr BackwardRule kBackward = BackwardRule::Arg;

  // The neutral start: lowest for max, highest for min (infinities for floats).
  EW_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<T>) {
      return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    } else {
      return kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }

  // Whether `v` replaces `acc` (strictly better; NaN beats numbers).
  EW_HD_INLINE static bool better(T v, T acc) {
    return (kMax ? v > acc : v < acc) || (is_nan(v) && !is_nan(acc));
  }

  // Same value as better(v, acc), but only one compare depends on acc: a NaN acc is
  // kept because no comparison with it is true.
  EW_HD_INLINE static void accumulate(Acc& acc, T v) {
    const bool wins = kMax ? v > acc : v < acc;
    acc = (wins || is_nan(v)) ? v : acc;
  }

  // A fold that skips NaN: one compare-select on the accumulator's chain (a max/min
  // instruction), so wide CPU loops stay at memory speed. Callers track NaN on their
  // own (off the chain) and restore the NaN-propagating result afterwards.
  EW_HD_INLINE static void accumulate_skipping_nan(Acc& acc, T v) { acc = (kMax ? v > acc : v < acc) ? v : acc; }

  EW_HD_INLINE static void accumulate(Acc& acc, int64_t& arg, T v, int64_t row) {
    if (arg < 0 || better(v, acc)) {
      acc = v;
      arg = row;
    }
  }

  // Equal values resolve to the lower row, whatever the order of the partials.
  EW_HD_INLINE static void merge(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    if (arg_b < 0) return;
    if (arg < 0 || better(acc_b, acc) || (!better(acc, acc_b) && arg_b < arg)) {
      acc = acc_b;
      arg = arg_b;
    }
  }

  // Without args (all -1) partials merge by value alone; a partial that saw no rows
  // holds identity(), which never beats a real value.
  template <bool kTrackArg>
  EW_HD_INLINE static void combine(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    if constexpr (kTrackArg) {
      merge(acc, arg, acc_b, arg_b);
    } else {
      acc = better(acc_b, acc) ? acc_b : acc;
    }
  }

  EW_HD_INLINE static T finalize(Acc acc, int64_t count) { return count == 0 ? T(0) : acc; }
};

template <class T>
struct Reducer<ReduceOp::Min, T> : ExtremumReducer<false, T> {};
template <class T>
struct Reducer<ReduceOp::Max, T> : ExtremumReducer<true, T> {};

// mul, torch_scatter's: the running product. An empty reduction writes 1 (the
// empty product; torch_scatter's scatter_mul starts its output at ones). Integers
// multiply modulo 2^64 in the wide accumulator, which truncates to the wrapping
// 32-bit product. Its gradient is y / m (torch_scatter's rule).
template <class T>
struct Reducer<ReduceOp::Mul, T> : ArglessReducer<Reducer<ReduceOp::Mul, T>, typename WideAccumulator<T>::type> {
  using Acc = typename WideAccumulator<T>::type;
  static constexpr bool kFinalizeUsesCount = false;
  static constexpr ScatterKind kScatter = ScatterKind::CasLoop;
  static constexpr BackwardRule kBackward = BackwardRule::Product;
  EW_HD_INLINE static Acc identity() { return Acc(1); }
  EW_HD_INLINE static void accumulate(Acc& acc, T v) { acc = multiply(acc, static_cast<Acc>(v)); }
  using ArglessReducer<Reducer<ReduceOp::Mul, T>, Acc>::accumulate;
  EW_HD_INLINE static void merge_values(Acc& acc, Acc b) { acc = multiply(acc, b); }
  EW_HD_INLINE static T finalize(Acc acc, int64_t) { return static_cast<T>(acc); }

 private:
  // Unsigned for integers: signed overflow is undefined, the modular product is not.
  EW_HD_INLINE static Acc multiply(Acc a, Acc b) {
    if constexpr (std::is_integral_v<Acc>) {
      return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  }
};

// The trait's backward rule for a runtime op.
inline BackwardRule backward_rule(ReduceOp op) noexcept {
  return visit_reduce_op(op, [](auto tag) { return Reducer<decltype(tag)::value, float>::kBackward; });
}

}  // namespace edgewise
