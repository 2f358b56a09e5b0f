// offsets_from_keys CUDA driver: each thread takes kItemsPerThread consecutive items
// of the merged boundaries-and-keys sequence, finds where they cut both lists by
// merge-path binary search and writes the offsets of its boundaries
// (offsets_from_keys_core.hpp, the same slice code the CPU threads run). Work per
// thread is fixed whatever the skew; every offset has one writer.
#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "offsets_from_keys/offsets_from_keys_backends.hpp"
#include "offsets_from_keys/offsets_from_keys_core.hpp"

namespace edgewise::offsets_detail {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kItemsPerThread = 32;

template <class K>
__global__ void first_bad_key_kernel(const K* __restrict__ keys, int64_t n, int64_t segments,
                                     unsigned long long* __restrict__ first_bad) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    if (key_status(keys, i, segments) != KeyStatus::Ok) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

template <class K>
__global__ void offsets_kernel(const K* __restrict__ keys, int64_t num_keys, int64_t segments, int64_t items,
                               int64_t* __restrict__ offsets) {
  for (int64_t slice = detail::grid_thread_index(); slice * kItemsPerThread < items;
       slice += detail::grid_thread_count()) {
    const int64_t begin = slice * kItemsPerThread;
    const int64_t end = begin + kItemsPerThread < items ? begin + kItemsPerThread : items;
    write_offsets(keys, num_keys, segments, begin, end, offsets);
  }
}

}  // namespace

template <class K>
int64_t first_bad_key_cuda(VectorView<const K> keys, int64_t segments, Context& ctx) {
  if (keys.size == 0) return -1;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_bad_key_kernel<K><<<detail::grid_size(keys.size, kThreads), kThreads, 0, stream>>>(keys.data, keys.size,
                                                                                          segments, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

template <class K>
void offsets_from_keys_cuda(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t segments = offsets.size - 1;
  const int64_t items = segments + 1 + keys.size;
  const int64_t slices = (items + kItemsPerThread - 1) / kItemsPerThread;
  offsets_kernel<K><<<detail::grid_size(slices, kThreads), kThreads, 0, stream>>>(keys.data, keys.size, segments,
                                                                                 items, offsets.data);
  EW_CUDA_CHECK_LAUNCH(stream);
}

#define EW_INSTANTIATE(K)                                                          \
  template int64_t first_bad_key_cuda<K>(VectorView<const K>, int64_t, Context&); \
  template void offsets_from_keys_cuda<K>(VectorView<const K>, VectorView<int64_t>, Context&);
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
EW_INSTANTIATE(uint32_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::offsets_detail
