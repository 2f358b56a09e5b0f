// CUDA half of validate_offsets: finds the first offset that breaks the contract.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "common/validate.hpp"

namespace edgewise::detail {

namespace {
__global__ void first_bad_offset_kernel(const int64_t* __restrict__ offsets, int64_t count, int64_t rows,
                                        unsigned long long* __restrict__ first_bad) {
  for (int64_t i = grid_thread_index(); i < count; i += grid_thread_count()) {
    bool ok;
    if (i == 0) {
      ok = offsets[0] == 0;
    } else {
      ok = offsets[i] >= offsets[i - 1] && offsets[i] <= rows;
    }
    if (i == count - 1) ok = ok && offsets[i] == rows;
    if (!ok) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}
}  // namespace

int64_t first_bad_offset_cuda(VectorView<const int64_t> offsets, int64_t rows, Context& ctx) {
  cudaStream_t stream = as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_bad_offset_kernel<<<grid_size(offsets.size, kBlock), kBlock, 0, stream>>>(offsets.data, offsets.size,
                                                                                 rows, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

}  // namespace edgewise::detail
