// The gradient of a reduction with respect to its elements (messages), shared by
// the CPU and CUDA drivers (EW_HD): for out[s] = op over the elements m_r of s,
//   grad_m[r] = grad_out[s] * dy_s / dm_r      (the op's trait: BackwardRule)
// Arg rules (min/max) follow the tie rule (TieRule, reduce_op.hpp): First routes
// through the forward's arg; Split divides the gradient evenly among the elements
// tied with the output y (counted first), SplitWithZeroBase into one more share
// when y is 0. Every other rule is message_grad of
// common/reducer.hpp, from the output y, the count and (Variance / StdDev) the mean.
// Over a CSR the mean is refolded per output with the op's own (Welford) fold, so a
// gradient is as accurate as the forward; scatter computes it in two passes (a sum,
// then the sum of residuals about that first mean: the classic corrected mean).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/reducer.hpp"

namespace edgewise::reduce_backward_detail {

template <class R>
inline constexpr bool kNeedsMean = R::kBackward == BackwardRule::Variance || R::kBackward == BackwardRule::StdDev;

// Whether element m is tied with the output y of a min/max: equal, or both NaN (a
// NaN output came from a NaN element, and every NaN element shares its gradient).
template <class T>
EW_HD_INLINE bool ties_output(T m, T y) {
  return m == y || (is_nan(m) && is_nan(y));
}

// The number of shares of an output's gradient under a split rule: its k tied
// elements, plus the zero it was reduced onto (SplitWithZeroBase, when y == 0).
template <class T>
EW_HD_INLINE int64_t tie_shares(int64_t ties, T y, TieRule rule) {
  return ties + (rule == TieRule::SplitWithZeroBase && y == T(0) ? 1 : 0);
}

// The accumulator message_grad reads for an output with `count` elements and mean `mean`.
template <class R, class F>
EW_HD_INLINE typename R::Acc stats_acc(F count, F mean) {
  if constexpr (kNeedsMean<R>) {
    using G = typename R::F;
    return R::from_moments(static_cast<G>(count), static_cast<G>(mean), G(0));
  } else {
    return R::identity();
  }
}

// Column c of the gradient of the elements [begin, end) of one output (a CSR row):
// element e's value is Source::value<kScaled>(source.edge(e), c); its gradient goes to
// grad[e * cols + c]. g / y: the output's gradient and value; arg_c its forward arg
// (Arg rules under TieRule::First; the split rules read only y).
template <class R, bool kScaled, class Source, class T>
EW_HD_INLINE void segment_message_grad(const Source& source, int64_t begin, int64_t end, int64_t c, int64_t cols,
                                       T g, T y, int64_t arg_c, TieRule tie_rule, T* grad) {
  if constexpr (R::kBackward == BackwardRule::Arg) {
    if (tie_rule != TieRule::First) {
      int64_t ties = 0;
      for (int64_t e = begin; e < end; ++e) {
        ties += ties_output(Source::template value<kScaled>(source.template edge<kScaled>(e), c), y) ? 1 : 0;
      }
      const int64_t shares = tie_shares(ties, y, tie_rule);
      const T share = shares > 0 ? g / static_cast<T>(shares) : T(0);
      for (int64_t e = begin; e < end; ++e) {
        const T m = Source::template value<kScaled>(source.template edge<kScaled>(e), c);
        grad[e * cols + c] = ties_output(m, y) ? share : T(0);
      }
    } else {
      for (int64_t e = begin; e < end; ++e) grad[e * cols + c] = e == arg_c ? g : T(0);
    }
  } else {
    typename R::Acc acc = R::identity();
    if constexpr (kNeedsMean<R>) {
      for (int64_t e = begin; e < end; ++e) {
        R::accumulate(acc, Source::template value<kScaled>(source.template edge<kScaled>(e), c));
      }
    }
    const int64_t count = end - begin;
    for (int64_t e = begin; e < end; ++e) {
      const T m = Source::template value<kScaled>(source.template edge<kScaled>(e), c);
      grad[e * cols + c] = message_grad<R>(g, m, y, acc, count);
    }
  }
}

// One element (row r, column c) of a scatter: its output s, that output's count and
// mean (Variance / StdDev), value y, gradient g and arg (TieRule::First), or the
// number of shares of y's gradient (shares > 0: a split rule, tie_shares).
template <class R, class T, class F>
EW_HD_INLINE T scatter_message_grad(T m, int64_t r, T g, T y, int64_t arg_sc, int64_t shares, F count, F mean) {
  if constexpr (R::kBackward == BackwardRule::Arg) {
    if (shares > 0) return ties_output(m, y) ? g / static_cast<T>(shares) : T(0);
    return r == arg_sc ? g : T(0);
  } else {
    return message_grad<R>(g, m, y, stats_acc<R>(count, mean), static_cast<int64_t>(count));
  }
}

}  // namespace edgewise::reduce_backward_detail
