// sort_by_key CUDA driver: cub::DeviceRadixSort::SortPairs over the varying bits only.
//
// A first kernel ORs and ANDs the ordered key bits (sort_by_key_core.hpp); the bits
// that vary bound [begin_bit, end_bit) of CUB's sort, so small ids sort in few
// passes. CUB flips the sign bit of signed keys exactly like KeyBits, so the range
// means the same bits to both. CUB's radix sort is stable; the permutation form
// sorts the identity sequence along with the keys. Temporary storage comes from
// ctx.scratch with CUB's two-phase protocol.
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "sort_by_key/sort_by_key_backends.hpp"
#include "sort_by_key/sort_by_key_core.hpp"

namespace edgewise::sort_by_key_detail {

namespace {

constexpr int kThreads = 256;

struct BitOr {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a | b; }
};
struct BitAnd {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a & b; }
};

// d_bits[0] |= every ordered key, d_bits[1] &= every ordered key (preset to 0 and ~0).
template <class K>
__global__ void __launch_bounds__(kThreads)
    key_bits_kernel(const K* __restrict__ keys, int64_t n, unsigned long long* __restrict__ d_bits) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename BlockReduce::TempStorage or_storage;
  __shared__ typename BlockReduce::TempStorage and_storage;
  unsigned long long or_bits = 0, and_bits = ~0ull;
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    const unsigned long long bits = KeyBits<K>::ordered(keys[i]);
    or_bits |= bits;
    and_bits &= bits;
  }
  or_bits = BlockReduce(or_storage).Reduce(or_bits, BitOr{});
  and_bits = BlockReduce(and_storage).Reduce(and_bits, BitAnd{});
  if (threadIdx.x == 0) {
    atomicOr(d_bits, or_bits);
    atomicAnd(d_bits + 1, and_bits);
  }
}

__global__ void iota_kernel(int64_t* __restrict__ out, int64_t n) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) out[i] = i;
}

// The bits of the ordered keys that vary (one small read-back).
template <class K>
BitRange varying_key_bits(const K* d_keys, int64_t n, Context& ctx) {
  cudaStream_t stream = detail::as_stream(ctx.stream());
  auto* d_bits = static_cast<unsigned long long*>(ctx.scratch(2 * sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_bits, 0x00, sizeof(unsigned long long), stream));
  EW_CUDA_CHECK(cudaMemsetAsync(d_bits + 1, 0xFF, sizeof(unsigned long long), stream));
  key_bits_kernel<K><<<detail::grid_size(n, kThreads * 8), kThreads, 0, stream>>>(d_keys, n, d_bits);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_bits[2] = {0ull, 0ull};
  EW_CUDA_CHECK(cudaMemcpyAsync(h_bits, d_bits, sizeof(h_bits), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return varying_bits(h_bits[0], h_bits[1]);
}

// Sorts (keys, d_values_in) into (sorted_keys, d_values_out) by bits [range.lo, range.hi).
template <class K, class V>
void cub_sort_pairs(const K* d_keys, K* d_sorted_keys, const V* d_values_in, V* d_values_out, int64_t n,
                    BitRange range, void* d_temp, size_t temp_bytes, cudaStream_t stream) {
  EW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(d_temp, temp_bytes, d_keys, d_sorted_keys, d_values_in,
                                                d_values_out, n, range.lo, range.hi, stream));
}

template <class K, class V>
size_t cub_sort_pairs_bytes(int64_t n, BitRange range, cudaStream_t stream) {
  size_t bytes = 0;
  EW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const K*>(nullptr),
                                                static_cast<K*>(nullptr), static_cast<const V*>(nullptr),
                                                static_cast<V*>(nullptr), n, range.lo, range.hi, stream));
  return bytes;
}

}  // namespace

template <class K>
void sort_by_key_cuda(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                      Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t n = keys.size;
  const BitRange range = varying_key_bits(keys.data, n, ctx);
  if (range.bits() == 0) {  // all keys equal: the identity permutation
    EW_CUDA_CHECK(cudaMemcpyAsync(sorted_keys.data, keys.data, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    iota_kernel<<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(permutation.data, n);
    EW_CUDA_CHECK_LAUNCH(stream);
    return;
  }
  const size_t cub_bytes = cub_sort_pairs_bytes<K, int64_t>(n, range, stream);
  ScratchLayout layout;
  const size_t iota_at = layout.add<int64_t>(n);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(cub_bytes));
  void* base = ctx.scratch(layout.bytes());
  int64_t* d_iota = ScratchLayout::at<int64_t>(base, iota_at);
  iota_kernel<<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(d_iota, n);
  EW_CUDA_CHECK_LAUNCH(stream);
  cub_sort_pairs(keys.data, sorted_keys.data, static_cast<const int64_t*>(d_iota), permutation.data, n, range,
                 ScratchLayout::at<std::byte>(base, cub_at), cub_bytes, stream);
}

template <class K, class P>
void sort_by_key_values_cuda(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                             VectorView<P> sorted_values, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t n = keys.size;
  const BitRange range = varying_key_bits(keys.data, n, ctx);
  if (range.bits() == 0) {  // all keys equal: order unchanged
    EW_CUDA_CHECK(cudaMemcpyAsync(sorted_keys.data, keys.data, n * sizeof(K), cudaMemcpyDeviceToDevice, stream));
    EW_CUDA_CHECK(
        cudaMemcpyAsync(sorted_values.data, values.data, n * sizeof(P), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const size_t cub_bytes = cub_sort_pairs_bytes<K, P>(n, range, stream);
  void* d_temp = ctx.scratch(cub_bytes);
  cub_sort_pairs(keys.data, sorted_keys.data, values.data, sorted_values.data, n, range, d_temp, cub_bytes, stream);
}

#define EW_INSTANTIATE(K)                                                                                  \
  template void sort_by_key_cuda<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>, Context&);   \
  template void sort_by_key_values_cuda<K, uint32_t>(VectorView<const K>, VectorView<const uint32_t>,     \
                                                     VectorView<K>, VectorView<uint32_t>, Context&);      \
  template void sort_by_key_values_cuda<K, uint64_t>(VectorView<const K>, VectorView<const uint64_t>,     \
                                                     VectorView<K>, VectorView<uint64_t>, Context&);
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::sort_by_key_detail
