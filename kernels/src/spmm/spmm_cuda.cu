// spmm CUDA driver: the native gather-reduce (the shared engine of
// gather_reduce/gather_reduce_cuda.cuh over GatherRows / ArgGradRows) and the weight
// gradient. Edge weights are a runtime coefficient here (a uniform branch per edge;
// 1 * x is exact), which halves the number of kernels compared with the CPU's
// compile-time switch.
#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "gather_reduce/gather_reduce_cuda.cuh"
#include "spmm/spmm_backends.hpp"

namespace edgewise::spmm_detail {

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

// One warp per edge: lanes stride over the columns, then a fixed shuffle tree sums them.
template <bool kArg, class T, class I>
__global__ void __launch_bounds__(kThreads)
    spmm_weight_backward_kernel(const int64_t* __restrict__ offsets, int64_t rows, const I* __restrict__ indices,
                                int64_t edges, const T* __restrict__ x, const T* __restrict__ grad_out,
                                const int64_t* __restrict__ arg, int64_t cols, bool mean, T* __restrict__ grad_w) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = detail::grid_thread_count() / kWarp;
  for (int64_t e = detail::grid_thread_index() / kWarp; e < edges; e += warps) {
    const int64_t v = upper_bound_index(offsets, 0, rows + 1, e) - 1;  // the row holding edge e
    const int64_t src = static_cast<int64_t>(indices[e]);
    T dot = T(0);
    for (int64_t c = lane; c < cols; c += kWarp) {
      dot += weight_grad_term<kArg>(grad_out[v * cols + c], x[src * cols + c], kArg ? arg[v * cols + c] : 0, e);
    }
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_down_sync(0xffffffffu, dot, offset);
    if (lane == 0) grad_w[e] = dot * weight_grad_scale<T>(mean, offsets[v + 1] - offsets[v]);
  }
}

}  // namespace

template <class T, class I>
void gather_reduce_cuda(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx) {
  gather_reduce_detail::gather_reduce_cuda_dispatch(source, dest, op, ctx);
}

// The min/max backward is a sum of masked messages.
template <class T, class I>
void gather_reduce_cuda(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp, Context& ctx) {
  gather_reduce_detail::launch_op<T, ReduceOp::Sum, false>(source, dest, ctx);
}

template <class T, class I>
void weight_backward_cuda(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                          const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const bool mean = backward_rule(op) == BackwardRule::Mean;
  const unsigned grid = detail::grid_size(edges, kThreads / kWarp);
  if (backward_rule(op) == BackwardRule::Arg) {
    spmm_weight_backward_kernel<true><<<grid, kThreads, 0, stream>>>(offsets, rows, indices, edges, x, grad_out, arg,
                                                                     cols, mean, grad_w);
  } else {
    spmm_weight_backward_kernel<false><<<grid, kThreads, 0, stream>>>(offsets, rows, indices, edges, x, grad_out, arg,
                                                                      cols, mean, grad_w);
  }
  EW_CUDA_CHECK_LAUNCH(stream);
}

#define EW_INSTANTIATE(T, I)                                                                                      \
  template void gather_reduce_cuda<T, I>(const GatherRows<T, I>&, const RowsOut<T>&, ReduceOp, Context&);         \
  template void gather_reduce_cuda<T, I>(const ArgGradRows<T, I>&, const RowsOut<T>&, ReduceOp, Context&);        \
  template void weight_backward_cuda<T, I>(const int64_t*, int64_t, int64_t, const I*, const T*, const T*,      \
                                           const int64_t*, int64_t, ReduceOp, T*, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::spmm_detail
