// Reduction backward, CPU (OpenMP): CSR outputs in parallel (each writes only its
// own elements' gradients), scatter sequentially in two passes over the rows.
#include <omp.h>

#include <vector>

#include "reduce_backward/reduce_backward_backends.hpp"
#include "reduce_backward/reduce_backward_core.hpp"

namespace edgewise::reduce_backward_detail {

namespace {

template <ReduceOp Op, bool kScaled, class Source, class T>
void csr_grad(const CsrGrad<Source, T>& g) {
  using R = Reducer<Op, T>;
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t s = 0; s < g.rows; ++s) {
    const int64_t begin = g.offsets[s], end = g.offsets[s + 1];
    for (int64_t c = 0; c < g.cols; ++c) {
      const int64_t o = s * g.cols + c;
      segment_message_grad<R, kScaled>(g.source, begin, end, c, g.cols, g.grad_out[o], g.out[o],
                                       g.arg != nullptr ? g.arg[o] : -1, g.tie_rule, g.grad);
    }
    if (g.grad_w == nullptr) continue;
    for (int64_t e = begin; e < end; ++e) {
      const T* x_row = g.source.template edge<false>(e).row;
      T dot = T(0);
      for (int64_t c = 0; c < g.cols; ++c) dot += g.grad[e * g.cols + c] * x_row[c];
      g.grad_w[e] = dot;
    }
  }
}

template <class Source, class T>
void csr_grad(const CsrGrad<Source, T>& g, ReduceOp op) {
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if (g.scaled) {
      csr_grad<Op, true>(g);
    } else {
      csr_grad<Op, false>(g);
    }
  });
}

}  // namespace

template <class T>
void segment_grad_cpu(const CsrGrad<gather_reduce_detail::ContiguousRows<T>, T>& g, ReduceOp op) {
  csr_grad(g, op);
}

template <class T, class I>
void spmm_grad_cpu(const CsrGrad<spmm_detail::GatherRows<T, I>, T>& g, ReduceOp op) {
  csr_grad(g, op);
}

// count and corrected mean per output (first the plain mean, then the mean of the
// residuals about it is added), or (min/max, split ties) the number of elements tied
// with each output, then each element's gradient.
template <class T, class I>
void scatter_grad_cpu(const T* values, const I* index, int64_t M, int64_t S, int64_t C, ReduceOp op, const T* out,
                      const int64_t* arg, TieRule tie_rule, const T* grad_out, T* grad_values) {
  visit_reduce_op(op, [&](auto tag) {
    using R = Reducer<decltype(tag)::value, T>;
    std::vector<T> count(static_cast<size_t>(S), T(0));
    std::vector<T> mean;
    std::vector<int64_t> ties;
    for (int64_t r = 0; r < M; ++r) count[static_cast<size_t>(index[r])] += T(1);
    if constexpr (R::kBackward == BackwardRule::Arg) {
      if (tie_rule != TieRule::First) {
        ties.assign(static_cast<size_t>(S * C), 0);
        for (int64_t r = 0; r < M; ++r) {
          const int64_t s = static_cast<int64_t>(index[r]);
          for (int64_t c = 0; c < C; ++c) ties[s * C + c] += ties_output(values[r * C + c], out[s * C + c]) ? 1 : 0;
        }
      }
    }
    if constexpr (kNeedsMean<R>) {
      mean.assign(static_cast<size_t>(S * C), T(0));
      std::vector<T> residual(static_cast<size_t>(S * C), T(0));
      for (int64_t r = 0; r < M; ++r) {
        const int64_t s = static_cast<int64_t>(index[r]);
        for (int64_t c = 0; c < C; ++c) mean[s * C + c] += values[r * C + c];
      }
      for (int64_t i = 0; i < S * C; ++i) mean[i] = count[i / C] > T(0) ? mean[i] / count[i / C] : T(0);
      for (int64_t r = 0; r < M; ++r) {
        const int64_t s = static_cast<int64_t>(index[r]);
        for (int64_t c = 0; c < C; ++c) residual[s * C + c] += values[r * C + c] - mean[s * C + c];
      }
      for (int64_t i = 0; i < S * C; ++i) {
        if (count[i / C] > T(0)) mean[i] += residual[i] / count[i / C];
      }
    }
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < M; ++r) {
      const int64_t s = static_cast<int64_t>(index[r]);
      for (int64_t c = 0; c < C; ++c) {
        const int64_t o = s * C + c;
        grad_values[r * C + c] = scatter_message_grad<R>(values[r * C + c], r, grad_out[o], out[o],
                                                         arg != nullptr ? arg[o] : -1,
                                                         ties.empty() ? 0 : tie_shares(ties[o], out[o], tie_rule),
                                                         count[s], kNeedsMean<R> ? mean[o] : T(0));
      }
    }
  });
}

template void segment_grad_cpu<float>(const CsrGrad<gather_reduce_detail::ContiguousRows<float>, float>&, ReduceOp);
template void segment_grad_cpu<double>(const CsrGrad<gather_reduce_detail::ContiguousRows<double>, double>&,
                                       ReduceOp);
#define EW_INSTANTIATE(T, I)                                                                                 \
  template void spmm_grad_cpu<T, I>(const CsrGrad<spmm_detail::GatherRows<T, I>, T>&, ReduceOp);             \
  template void scatter_grad_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, ReduceOp, const T*,    \
                                       const int64_t*, TieRule, const T*, T*);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::reduce_backward_detail
