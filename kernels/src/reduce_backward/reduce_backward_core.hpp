// The gradient of a reduction with respect to its elements (messages), shared by
// the CPU and CUDA drivers (EW_HD): for out[s] = op over the elements m_r of s,
//   grad_m[r] = grad_out[s] * dy_s / dm_r      (the op's trait: BackwardRule)
// Arg rules route through the forward's arg; every other rule is message_grad of
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
// (Arg rules).
template <class R, bool kScaled, class Source, class T>
EW_HD_INLINE void segment_message_grad(const Source& source, int64_t begin, int64_t end, int64_t c, int64_t cols,
                                       T g, T y, int64_t arg_c, T* grad) {
  if constexpr (R::kBackward == BackwardRule::Arg) {
    for (int64_t e = begin; e < end; ++e) grad[e * cols + c] = e == arg_c ? g : T(0);
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
// mean (Variance / StdDev), value y, gradient g and arg.
template <class R, class T, class F>
EW_HD_INLINE T scatter_message_grad(T m, int64_t r, T g, T y, int64_t arg_sc, F count, F mean) {
  if constexpr (R::kBackward == BackwardRule::Arg) {
    return r == arg_sc ? g : T(0);
  } else {
    return message_grad<R>(g, m, y, stats_acc<R>(count, mean), static_cast<int64_t>(count));
  }
}

}  // namespace edgewise::reduce_backward_detail
