// Reduction backward, CUDA. CSR outputs: one thread per output element (row, column)
// refolds its elements (Variance / StdDev: the Welford mean) and writes their
// gradients; the spmm weight gradient is one thread per edge. Scatter: the two-pass
// moments of scatter_moments_cuda.cuh for the count and mean (ops that read them),
// or (min/max, a split rule) an atomicAdd count of the elements tied with each output,
// then one thread per element. No atomics on the gradients: each is written by one
// thread.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "reduce_backward/reduce_backward_backends.hpp"
#include "reduce_backward/reduce_backward_core.hpp"
#include "scatter_reduce/scatter_moments_cuda.cuh"

namespace edgewise::reduce_backward_detail {

namespace {

constexpr int kThreads = 256;

template <ReduceOp Op, bool kScaled, class Source, class T>
__global__ void __launch_bounds__(kThreads) csr_grad_kernel(CsrGrad<Source, T> g) {
  using R = Reducer<Op, T>;
  const int64_t outputs = g.rows * g.cols;
  for (int64_t o = detail::grid_thread_index(); o < outputs; o += detail::grid_thread_count()) {
    const int64_t s = o / g.cols;
    const int64_t c = o - s * g.cols;
    segment_message_grad<R, kScaled>(g.source, g.offsets[s], g.offsets[s + 1], c, g.cols, g.grad_out[o], g.out[o],
                                     g.arg != nullptr ? g.arg[o] : -1, g.tie_rule, g.grad);
  }
}

template <class Source, class T>
__global__ void __launch_bounds__(kThreads) weight_grad_kernel(CsrGrad<Source, T> g, int64_t edges) {
  for (int64_t e = detail::grid_thread_index(); e < edges; e += detail::grid_thread_count()) {
    const T* x_row = g.source.template edge<false>(e).row;
    T dot = T(0);
    for (int64_t c = 0; c < g.cols; ++c) dot += g.grad[e * g.cols + c] * x_row[c];
    g.grad_w[e] = dot;
  }
}

template <class Source, class T>
void csr_grad(const CsrGrad<Source, T>& g, ReduceOp op, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t outputs = g.rows * g.cols;
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if (g.scaled) {
      csr_grad_kernel<Op, true><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(g);
    } else {
      csr_grad_kernel<Op, false><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(g);
    }
  });
  EW_CUDA_CHECK_LAUNCH(stream);
  if (g.grad_w != nullptr && g.edges > 0) {
    weight_grad_kernel<<<detail::grid_size(g.edges, kThreads), kThreads, 0, stream>>>(g, g.edges);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
}

// Whether the op's rule reads the count (Mean) or the mean (Variance / StdDev) of its output.
template <class R>
inline constexpr bool kReadsMoments = R::kBackward == BackwardRule::Mean || kNeedsMean<R>;

// min/max, a split rule: ties[o] = the number of elements equal to out[o].
template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    count_ties_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total, int64_t cols,
                      const T* __restrict__ out, unsigned long long* __restrict__ ties) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t o = static_cast<int64_t>(index[r]) * cols + (i - r * cols);
    if (ties_output(values[i], out[o])) atomicAdd(ties + o, 1ull);
  }
}

template <ReduceOp Op, class T, class I, class F>
__global__ void __launch_bounds__(kThreads)
    scatter_grad_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total, int64_t cols,
                        scatter_moments_detail::ScatterMoments<F> moments, const unsigned long long* __restrict__ ties,
                        TieRule tie_rule, const T* __restrict__ out, const int64_t* __restrict__ arg, const T* __restrict__ grad_out,
                        T* __restrict__ grad) {
  using R = Reducer<Op, T>;
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t o = static_cast<int64_t>(index[r]) * cols + (i - r * cols);
    F n = F(0), mean = F(0), m2 = F(0);
    if constexpr (kReadsMoments<R>) scatter_moments_detail::moments_of(moments, o, cols, n, mean, m2);
    const int64_t shares = ties != nullptr ? tie_shares(static_cast<int64_t>(ties[o]), out[o], tie_rule) : 0;
    grad[i] = scatter_message_grad<R>(values[i], r, grad_out[o], out[o], arg != nullptr ? arg[o] : -1, shares, n, mean);
  }
}

}  // namespace

template <class T>
void segment_grad_cuda(const CsrGrad<gather_reduce_detail::ContiguousRows<T>, T>& g, ReduceOp op, Context& ctx) {
  csr_grad(g, op, ctx);
}

template <class T, class I>
void spmm_grad_cuda(const CsrGrad<spmm_detail::GatherRows<T, I>, T>& g, ReduceOp op, Context& ctx) {
  csr_grad(g, op, ctx);
}

template <class T, class I>
void scatter_grad_cuda(const T* values, const I* index, int64_t M, int64_t S, int64_t C, ReduceOp op, const T* out,
                       const int64_t* arg, TieRule tie_rule, const T* grad_out, T* grad_values, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t total = M * C;
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    using R = Reducer<Op, T>;
    // Both use ctx.scratch, and no op needs both.
    scatter_moments_detail::ScatterMoments<T> moments;
    if constexpr (kReadsMoments<R>) moments.compute(values, index, M, S, C, false, ctx, stream);
    unsigned long long* d_ties = nullptr;
    if constexpr (R::kBackward == BackwardRule::Arg) {
      if (tie_rule != TieRule::First) {
        const auto bytes = static_cast<size_t>(S * C) * sizeof(unsigned long long);
        d_ties = static_cast<unsigned long long*>(ctx.scratch(bytes));
        EW_CUDA_CHECK(cudaMemsetAsync(d_ties, 0, bytes, stream));
        count_ties_kernel<T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(values, index, total, C,
                                                                                            out, d_ties);
        EW_CUDA_CHECK_LAUNCH(stream);
      }
    }
    scatter_grad_kernel<Op, T, I, T><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
        values, index, total, C, moments, d_ties, tie_rule, out, arg, grad_out, grad_values);
    EW_CUDA_CHECK_LAUNCH(stream);
  });
}

template void segment_grad_cuda<float>(const CsrGrad<gather_reduce_detail::ContiguousRows<float>, float>&, ReduceOp,
                                       Context&);
template void segment_grad_cuda<double>(const CsrGrad<gather_reduce_detail::ContiguousRows<double>, double>&,
                                        ReduceOp, Context&);
#define EW_INSTANTIATE(T, I)                                                                                     \
  template void spmm_grad_cuda<T, I>(const CsrGrad<spmm_detail::GatherRows<T, I>, T>&, ReduceOp, Context&);      \
  template void scatter_grad_cuda<T, I>(const T*, const I*, int64_t, int64_t, int64_t, ReduceOp, const T*,       \
                                        const int64_t*, TieRule, const T*, T*, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::reduce_backward_detail
