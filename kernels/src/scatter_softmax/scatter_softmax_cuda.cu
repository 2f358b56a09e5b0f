// scatter_softmax's elementwise passes on CUDA: one thread per element, grid-stride.
#include <cuda_runtime.h>

#include <cmath>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "scatter_softmax/scatter_softmax_backends.hpp"
#include "scatter_softmax/scatter_softmax_core.hpp"

namespace edgewise::scatter_softmax_detail {

namespace {
constexpr int kThreads = 256;

// The position of element i's group entry: [M, C] values with [S, C] groups, or
// transposed [C, M] with [C, S].
template <class I>
__device__ __forceinline__ int64_t group_of(const I* index, int64_t i, int64_t M, int64_t C, int64_t S,
                                            bool transposed) {
  return transposed ? i / M * S + static_cast<int64_t>(index[i % M]) : static_cast<int64_t>(index[i / C]) * C + i % C;
}

template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    exponentials_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t M, int64_t C, int64_t S,
                        bool transposed, bool nan_as_zero, const T* __restrict__ group_max, T* __restrict__ out) {
  using F = Compute<T>;
  for (int64_t i = detail::grid_thread_index(); i < M * C; i += detail::grid_thread_count()) {
    const int64_t g = group_of(index, i, M, C, S, transposed);
    const F e = exp(static_cast<F>(values[i]) - static_cast<F>(group_max[g]));
    out[i] = T(nan_as_zero && e != e ? F(0) : e);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    logsumexp_finalise_kernel(const T* __restrict__ group_max, const T* __restrict__ group_sum, int64_t n, double eps,
                              T* __restrict__ out) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    out[i] = logsumexp_value(group_max[i], group_sum[i], eps);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) log_of_sums_kernel(T* __restrict__ group_sum, int64_t n, double eps) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    group_sum[i] = log_of_sum(group_sum[i], eps);
  }
}

// log_softmax: group_sum holds log(z + eps) (log_of_sums_kernel ran first).
template <class T, class I>
__global__ void __launch_bounds__(kThreads)
    normalise_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t M, int64_t C, int64_t S,
                     bool transposed, const T* __restrict__ group_max, const T* __restrict__ group_sum,
                     bool log_softmax, T* __restrict__ out) {
  for (int64_t i = detail::grid_thread_index(); i < M * C; i += detail::grid_thread_count()) {
    const int64_t g = group_of(index, i, M, C, S, transposed);
    out[i] = log_softmax ? log_softmax_value(values[i], group_max[g], group_sum[g])
                         : softmax_value(out[i], group_sum[g]);
  }
}
}  // namespace

template <class T, class I>
void exponentials_cuda(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                       bool nan_as_zero, const T* group_max, T* out, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t total = M * C;
  exponentials_kernel<T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
      values, index, M, C, S, transposed, nan_as_zero, group_max, out);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class T>
void logsumexp_finalise_cuda(const T* group_max, const T* group_sum, int64_t n, double eps, T* out, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  if (n == 0) return;
  logsumexp_finalise_kernel<T><<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(group_max, group_sum, n, eps,
                                                                                         out);
  EW_CUDA_CHECK_LAUNCH(stream);
  // The group buffers are freed when scatter_logsumexp returns: wait for the kernel.
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T, class I>
void normalise_cuda(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                    const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t total = M * C;
  const bool log_softmax = kind == SoftmaxKind::LogSoftmax;
  if (log_softmax && S * C > 0) {
    log_of_sums_kernel<T><<<detail::grid_size(S * C, kThreads), kThreads, 0, stream>>>(group_sum, S * C, eps);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  normalise_kernel<T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
      values, index, M, C, S, transposed, group_max, group_sum, log_softmax, out);
  EW_CUDA_CHECK_LAUNCH(stream);
  // The group buffers are freed when scatter_softmax returns: wait for the kernels.
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                               \
  template void exponentials_cuda<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, bool, const T*, T*, \
                                        Context&);                                                           \
  template void normalise_cuda<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, const T*, T*,      \
                                     SoftmaxKind, double, T*, Context&);
#define EW_INSTANTIATE(T)                                                                              \
  template void logsumexp_finalise_cuda<T>(const T*, const T*, int64_t, double, T*, Context&);          \
  EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise::scatter_softmax_detail
