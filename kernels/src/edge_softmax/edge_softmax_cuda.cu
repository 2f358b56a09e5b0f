// edge_softmax CUDA driver: one warp per (destination row, head). Lanes stride over the
// row's edges for the max, then for the sum of exps (edge_softmax_core.hpp), each merged
// by a fixed shuffle tree, then write the probabilities. No atomics: reproducible.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edge_softmax/edge_softmax_backends.hpp"
#include "edge_softmax/edge_softmax_core.hpp"

namespace edgewise::edge_softmax_detail {

namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;

template <class T>
__global__ void edge_softmax_kernel(const int64_t* __restrict__ offsets, int64_t rows, int64_t heads,
                                    const T* __restrict__ scores, T* __restrict__ out) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = detail::grid_thread_count() / kWarp;
  for (int64_t p = detail::grid_thread_index() / kWarp; p < rows * heads; p += warps) {
    const int64_t v = p / heads;
    const int64_t h = p % heads;
    const int64_t begin = offsets[v], end = offsets[v + 1];
    T max = softmax_max_identity<T>();
    for (int64_t e = begin + lane; e < end; e += kWarp) max = softmax_max(max, scores[e * heads + h]);
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) {
      max = softmax_max(max, __shfl_down_sync(0xffffffffu, max, offset));
    }
    max = __shfl_sync(0xffffffffu, max, 0);
    T sum = T(0);
    for (int64_t e = begin + lane; e < end; e += kWarp) sum += exp_of(scores[e * heads + h] - max);
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    sum = __shfl_sync(0xffffffffu, sum, 0);
    for (int64_t e = begin + lane; e < end; e += kWarp) out[e * heads + h] = exp_of(scores[e * heads + h] - max) / sum;
  }
}

template <class T>
__global__ void edge_softmax_backward_kernel(const int64_t* __restrict__ offsets, int64_t rows, int64_t heads,
                                             const T* __restrict__ out, const T* grad_out, T* grad_scores) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  const int64_t warps = detail::grid_thread_count() / kWarp;
  for (int64_t p = detail::grid_thread_index() / kWarp; p < rows * heads; p += warps) {
    const int64_t v = p / heads;
    const int64_t h = p % heads;
    const int64_t begin = offsets[v], end = offsets[v + 1];
    T dot = T(0);
    for (int64_t e = begin + lane; e < end; e += kWarp) dot += grad_out[e * heads + h] * out[e * heads + h];
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2) dot += __shfl_down_sync(0xffffffffu, dot, offset);
    dot = __shfl_sync(0xffffffffu, dot, 0);
    // grad_scores may alias grad_out: every lane read its elements above, before this write.
    for (int64_t e = begin + lane; e < end; e += kWarp) {
      const int64_t i = e * heads + h;
      grad_scores[i] = out[i] * (grad_out[i] - dot);
    }
  }
}

}  // namespace

template <class T>
void edge_softmax_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out, Context& ctx) {
  if (rows * heads == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  edge_softmax_kernel<T><<<detail::grid_size(rows * heads, kThreads / kWarp), kThreads, 0, stream>>>(
      offsets, rows, heads, scores, out);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class T>
void edge_softmax_backward_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                                T* grad_scores, Context& ctx) {
  if (rows * heads == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  edge_softmax_backward_kernel<T><<<detail::grid_size(rows * heads, kThreads / kWarp), kThreads, 0, stream>>>(
      offsets, rows, heads, out, grad_out, grad_scores);
  EW_CUDA_CHECK_LAUNCH(stream);
}

#define EW_INSTANTIATE(T)                                                                          \
  template void edge_softmax_cuda<T>(const int64_t*, int64_t, int64_t, const T*, T*, Context&);    \
  template void edge_softmax_backward_cuda<T>(const int64_t*, int64_t, int64_t, const T*, const T*, T*, Context&);
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
#undef EW_INSTANTIATE

}  // namespace edgewise::edge_softmax_detail
