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
//                              Moments         CUDA: two passes of atomicAdd, count + sum -> mean, then the
//                                              sum of squared deviations; finalize from (count, mean, M2)
//                                              (from_moments). CPU: per-thread partials merged with merge.
//   kBackward                the gradient of one element (message) m of an output y:
//                              Sum      dy/dm = 1
//                              Mean     dy/dm = 1 / count
//                              Arg      dy/dm = 1 where arg picked m, else 0
//                              Product  dy/dm = y / m (torch_scatter's; inf/NaN for m == 0)
//                              Variance dy/dm = 2 (m - mean) / count
//                              StdDev   dy/dm = (m - mean) / (count * y), 0 where y was masked to 0
//                            (message_grad below computes all but Arg from the output's
//                            accumulator, so a new op with an existing rule needs no driver change)
//   kIntegers                whether integer element types are defined (false: the entry
//                            points reject them with std::invalid_argument)
//   identity()               the accumulator of no elements
//   accumulate(acc, v)       fold one element (no arg tracked)
//   accumulate(acc, arg, v, row)  fold element v of `row` (rows in increasing order)
//   merge(acc, arg, b, arg_b)     merge a partial over other rows, deterministically
//   combine<kTrackArg>(...)  merge when args are (or are not) tracked
//   finalize(acc, count)     the output value of `count` elements
//   mean_of(acc)             (Variance / StdDev rules) the mean the accumulator holds
//
// Adding an op touches three files:
//   1. this file: a Reducer<ReduceOp::NewOp, T> specialisation with the members above;
//   2. reduce_op.hpp: one line X(NewOp, "name", "alias") in EW_REDUCE_OPS;
//   3. kernels/reference/segment_reduce_ref.hpp: the op in the float64/long double oracle.
// Drivers, Python names and the tests' op lists follow from the list. A backward
// rule or scatter kind that a driver does not implement is rejected at compile
// time (static_assert) or, for backward entry points, with std::invalid_argument.
//
// Element types: float, double, int32, uint32, int64 and the 16-bit Half / BFloat16
// (common/half.hpp). Semantics shared by all of them:
//  - sum/mean/mul accumulate float in float, double in double, Half / BFloat16 in
//    float (rounded once, on output), int32 and int64 in int64 (wrapping modulo 2^64,
//    never overflowing), uint32 in uint64; an int32 sum or product wraps modulo 2^32
//    on output; an integer mean rounds toward -inf (floor, as torch_scatter's
//    scatter_mean: -7 / 2 = -4).
//  - min/max compare Half / BFloat16 as their exact float values.
//  - min/max: NaN beats every number (it propagates), among equals the lower row
//    wins; an empty reduction writes 0 and arg -1.
//  - var/std: floating point only (see their trait).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "edgewise/kernels/common/float_bits.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise {

enum class ScatterKind { Add, PackedExtremum, CasLoop, Moments };
enum class BackwardRule { Sum, Mean, Arg, Product, Variance, StdDev };

// The integer accumulators are 64-bit: sums and products modulo 2^64 truncate to
// the same 32-bit result as wrapping 32-bit arithmetic would give. The 16-bit
// float types accumulate in float (ComputeType).
template <class T>
struct WideAccumulator {
  using type = ComputeType<T>;
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
  static constexpr bool kIntegers = true;

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

// a + b, modulo 2^64 for integers (signed overflow is undefined; the modular sum is not).
template <class Acc>
EW_HD_INLINE Acc wrapping_add(Acc a, Acc b) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

// sum and mean: a running (wide) sum.
template <class Derived, class T>
struct AddReducer : ArglessReducer<Derived, typename WideAccumulator<T>::type> {
  using Acc = typename WideAccumulator<T>::type;
  static constexpr ScatterKind kScatter = ScatterKind::Add;
  EW_HD_INLINE static Acc identity() { return Acc(0); }
  EW_HD_INLINE static void accumulate(Acc& acc, T v) { acc = wrapping_add(acc, static_cast<Acc>(v)); }
  EW_HD_INLINE static void merge_values(Acc& acc, Acc b) { acc = wrapping_add(acc, b); }
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
    if constexpr (std::is_integral_v<Acc> && std::is_signed_v<Acc>) {
      const Acc n = static_cast<Acc>(count);
      const Acc quotient = acc / n;
      return static_cast<T>(acc % n < 0 ? quotient - 1 : quotient);  // floor (count > 0)
    } else {
      return static_cast<T>(acc / static_cast<Acc>(count));  // unsigned: floor too
    }
  }
};

// min and max: the best value and its row. kMax picks the larger. The 16-bit float
// types are held as their (exact) float values.
template <bool kMax, class T>
struct ExtremumReducer {
  using Acc = ComputeType<T>;
  static constexpr bool kHasArg = true;
  static constexpr bool kNanSkippingFold = std::is_floating_point_v<Acc>;
  static constexpr bool kLongChain = true;
  static constexpr bool kFinalizeUsesCount = false;
  static constexpr bool kIntegers = true;
  static constexpr ScatterKind kScatter = ScatterKind::PackedExtremum;
  static constexpr BackwardRule kBackward = BackwardRule::Arg;

  // The neutral start: lowest for max, highest for min (infinities for floats).
  EW_HD_INLINE static Acc identity() {
    if constexpr (std::is_floating_point_v<Acc>) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }

  // Whether `v` replaces `acc` (strictly better; NaN beats numbers).
  EW_HD_INLINE static bool better(Acc v, Acc acc) {
    return (kMax ? v > acc : v < acc) || (is_nan(v) && !is_nan(acc));
  }

  // Same value as better(v, acc), but only one compare depends on acc: a NaN acc is
  // kept because no comparison with it is true.
  EW_HD_INLINE static void accumulate(Acc& acc, T value) {
    const Acc v = static_cast<Acc>(value);
    const bool wins = kMax ? v > acc : v < acc;
    acc = (wins || is_nan(v)) ? v : acc;
  }

  // A fold that skips NaN: one compare-select on the accumulator's chain (a max/min
  // instruction), so wide CPU loops stay at memory speed. Callers track NaN on their
  // own (off the chain) and restore the NaN-propagating result afterwards.
  EW_HD_INLINE static void accumulate_skipping_nan(Acc& acc, Acc v) { acc = (kMax ? v > acc : v < acc) ? v : acc; }

  // Compare and select, both tests evaluated, no branch: a CPU loop over columns then
  // vectorises, where a branch per element mispredicts on random data (spmm max with
  // arg at C = 16 measured 3-4x slower that way).
  EW_HD_INLINE static void accumulate(Acc& acc, int64_t& arg, T value, int64_t row) {
    const Acc v = static_cast<Acc>(value);
    const bool empty = arg < 0;
    const bool wins = better(v, acc);
    const bool take = empty || wins;
    acc = take ? v : acc;
    arg = take ? row : arg;
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

  EW_HD_INLINE static T finalize(Acc acc, int64_t count) { return count == 0 ? T(0) : static_cast<T>(acc); }
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

// var and std: population variance (divide by the count, like PyG's
// VarAggregation / StdAggregation), and std = sqrt(max(var, 1e-5)) with outputs at
// or below sqrt(1e-5) set to 0 (PyG's clamp, then masked_fill). Empty: 0. The
// 16-bit types accumulate in float and round once.
//
// The accumulator is Welford's (count, mean, M2 = sum of squared deviations from
// the running mean), not (sum, sum of squares): var = E[x^2] - E[x]^2 subtracts two
// numbers of size mean^2 to get one of size var, so for |mean| >> std every digit
// cancels (float values around 1e4 with unit noise: E[x^2] ~ 1e8 has an ulp of 8,
// the variance is 1). Welford's update only ever adds deviations from the mean.
// Partials (thread lanes, hub pieces, per-thread scatter partials) merge with
// Chan et al.'s parallel formula, which is as stable. float accumulates in float
// (like sum), double in double; integers are not defined (kIntegers = false: the
// entry points reject them; the trait still compiles for them in double).
template <class F>
struct Welford {
  F count;
  F mean;
  F m2;
};

// The type var/std accumulate in: float for float and the 16-bit types, double for
// double (and for integers, which the entry points reject).
template <class T>
using MomentsFloat = std::conditional_t<kFloatingElement<T>, ComputeType<T>, double>;

template <class Derived, class T>
struct MomentsReducer : ArglessReducer<Derived, Welford<MomentsFloat<T>>> {
  using F = MomentsFloat<T>;
  using Acc = Welford<F>;
  static constexpr bool kFinalizeUsesCount = false;
  static constexpr bool kLongChain = true;
  static constexpr bool kIntegers = false;
  static constexpr ScatterKind kScatter = ScatterKind::Moments;
  EW_HD_INLINE static Acc identity() { return Acc{F(0), F(0), F(0)}; }
  EW_HD_INLINE static void accumulate(Acc& acc, T v) {
    const F x = static_cast<F>(v);
    acc.count += F(1);
    const F delta = x - acc.mean;
    acc.mean += delta / acc.count;
    acc.m2 += delta * (x - acc.mean);
  }
  using ArglessReducer<Derived, Acc>::accumulate;
  // Chan's merge: n = na + nb, d = mean_b - mean_a, mean = mean_a + d nb / n,
  // M2 = M2_a + M2_b + d^2 na nb / n. An empty side leaves the other unchanged.
  EW_HD_INLINE static void merge_values(Acc& a, Acc b) {
    if (b.count == F(0)) return;
    if (a.count == F(0)) {
      a = b;
      return;
    }
    const F n = a.count + b.count;
    const F delta = b.mean - a.mean;
    const F share_b = b.count / n;
    a.mean += delta * share_b;
    a.m2 += b.m2 + delta * delta * a.count * share_b;
    a.count = n;
  }
  // The accumulator from moments computed elsewhere (the CUDA scatter's two passes).
  EW_HD_INLINE static Acc from_moments(F count, F mean, F m2) { return Acc{count, mean, m2}; }
  EW_HD_INLINE static F mean_of(const Acc& acc) { return acc.mean; }
  EW_HD_INLINE static F variance(const Acc& acc) { return acc.count > F(0) ? acc.m2 / acc.count : F(0); }
};

template <class T>
struct Reducer<ReduceOp::Var, T> : MomentsReducer<Reducer<ReduceOp::Var, T>, T> {
  using Base = MomentsReducer<Reducer<ReduceOp::Var, T>, T>;
  static constexpr BackwardRule kBackward = BackwardRule::Variance;
  EW_HD_INLINE static T finalize(typename Base::Acc acc, int64_t) { return static_cast<T>(Base::variance(acc)); }
};

// PyG's constants: the clamp 1e-5 and the mask threshold math.sqrt(1e-5), both
// rounded to T as torch does for a scalar next to a T tensor.
template <class T>
struct Reducer<ReduceOp::Std, T> : MomentsReducer<Reducer<ReduceOp::Std, T>, T> {
  using Base = MomentsReducer<Reducer<ReduceOp::Std, T>, T>;
  static constexpr BackwardRule kBackward = BackwardRule::StdDev;
  EW_HD_INLINE static T finalize(typename Base::Acc acc, int64_t) {
    using F = typename Base::F;
    const F var = Base::variance(acc);
    const F clamped = var < F(1e-5) ? F(1e-5) : var;  // NaN stays NaN
    F s;
    if constexpr (std::is_same_v<F, float>) {
      s = sqrtf(clamped);
    } else {
      s = sqrt(clamped);
    }
    return s <= F(0.0031622776601683794) ? T(0) : static_cast<T>(s);
  }
};

// The gradient of output y (accumulator `acc` over `count` elements) with respect
// to one of its elements m, times the output's gradient g: every rule but Arg.
template <class R, class T>
EW_HD_INLINE T message_grad(T g, T m, T y, const typename R::Acc& acc, int64_t count) {
  if constexpr (R::kBackward == BackwardRule::Sum) {
    return g;
  } else if constexpr (R::kBackward == BackwardRule::Mean) {
    return count > 0 ? g / static_cast<T>(count) : T(0);
  } else if constexpr (R::kBackward == BackwardRule::Product) {
    return g * y / m;
  } else if constexpr (R::kBackward == BackwardRule::Variance) {
    return count > 0 ? g * T(2) * (m - static_cast<T>(R::mean_of(acc))) / static_cast<T>(count) : T(0);
  } else if constexpr (R::kBackward == BackwardRule::StdDev) {
    return count > 0 && y != T(0) ? g * (m - static_cast<T>(R::mean_of(acc))) / (static_cast<T>(count) * y) : T(0);
  } else {
    static_assert(R::kBackward != BackwardRule::Arg, "message_grad: Arg rules route through the forward's arg");
    return T(0);
  }
}

// Whether Op is defined for element type T (integers only where kIntegers). Drivers
// compile an op for T only where it is: the entry points reject the rest first.
template <ReduceOp Op, class T>
inline constexpr bool kDefinedFor = !std::is_integral_v<T> || Reducer<Op, float>::kIntegers;

// Whether integer element types are defined for the runtime op (the trait's kIntegers).
inline bool defined_for_integers(ReduceOp op) noexcept {
  return visit_reduce_op(op, [](auto tag) { return Reducer<decltype(tag)::value, float>::kIntegers; });
}

// The element type's name in error messages.
template <class T>
constexpr const char* element_type_name() noexcept {
  if constexpr (std::is_same_v<T, float>) return "float32";
  if constexpr (std::is_same_v<T, double>) return "float64";
  if constexpr (std::is_same_v<T, int32_t>) return "int32";
  if constexpr (std::is_same_v<T, uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, int64_t>) return "int64";
  if constexpr (std::is_same_v<T, Half>) return "float16";
  if constexpr (std::is_same_v<T, BFloat16>) return "bfloat16";
  return "?";
}

// The trait's backward rule for a runtime op.
inline BackwardRule backward_rule(ReduceOp op) noexcept {
  return visit_reduce_op(op, [](auto tag) { return Reducer<decltype(tag)::value, float>::kBackward; });
}

}  // namespace edgewise
