// validate_index_range on CUDA: the first out-of-range position, by atomicMin.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "common/index_range.hpp"
#include "edgewise/kernels/cuda/launch.cuh"

namespace edgewise::detail {

namespace {
constexpr int kThreads = 256;

template <class I>
__global__ void first_out_of_range_kernel(const I* __restrict__ values, int64_t n, int64_t limit,
                                          unsigned long long* __restrict__ first_bad) {
  for (int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    if (!index_in_range(values[i], limit)) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}
}  // namespace

template <class I>
int64_t first_out_of_range_cuda(const I* values, int64_t n, int64_t limit, Context& ctx) {
  cudaStream_t stream = as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_out_of_range_kernel<I><<<grid_size(n, kThreads), kThreads, 0, stream>>>(values, n, limit, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

template int64_t first_out_of_range_cuda<int32_t>(const int32_t*, int64_t, int64_t, Context&);
template int64_t first_out_of_range_cuda<int64_t>(const int64_t*, int64_t, int64_t, Context&);

}  // namespace edgewise::detail
