// run_length_encode CUDA driver: boundary flags -> inclusive scan -> materialise.
//
// The chunk table (pointers and global starts) is copied to scratch; one thread per
// global position writes its boundary flag (run_length_encode_core.hpp, the test the
// CPU driver runs too); cub::DeviceScan::InclusiveSum turns the flags, in place, into
// run numbers; the run count is read back and the capacity checked before any
// output is written. Then the thread at each run's last position writes the run's
// value and its end position, and cub::DeviceAdjacentDifference::SubtractLeft turns
// the ends, in place, into lengths. Every output element has one writer.
#include <cub/device/device_adjacent_difference.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <vector>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "run_length_encode/run_length_encode_backends.hpp"
#include "run_length_encode/run_length_encode_core.hpp"

namespace edgewise::rle_detail {

namespace {

constexpr int kThreads = 256;

template <class K>
__global__ void run_flags_kernel(ChunkedKeys<K> keys, int64_t n, int64_t* __restrict__ flags) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    flags[i] = run_starts_at(keys, i) ? 1 : 0;
  }
}

// run_number: inclusive scan of the flags. Writes values[r] and, kLengths, the end
// position of run r into run_end[r].
template <bool kLengths, class K>
__global__ void run_materialise_kernel(ChunkedKeys<K> keys, const int64_t* __restrict__ run_number, int64_t n,
                                       K* __restrict__ values, int64_t* __restrict__ run_end) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    if (!run_ends_at(run_number, i, n)) continue;
    const int64_t r = run_number[i] - 1;
    values[r] = keys.at(i);
    if constexpr (kLengths) run_end[r] = i + 1;
  }
}

}  // namespace

template <class K>
int64_t run_length_encode_cuda(const char* op, std::span<const VectorView<const K>> chunks, VectorView<K> values,
                               VectorView<int64_t> lengths, bool with_lengths, Context& ctx) {
  const int64_t chunk_count = static_cast<int64_t>(chunks.size());
  std::vector<const K*> h_pointers(chunks.size());
  std::vector<int64_t> h_start(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    h_pointers[c] = chunks[c].data;
    h_start[c + 1] = h_start[c] + chunks[c].size;
  }
  const int64_t n = h_start.back();
  if (n == 0) return 0;

  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  // CUB sizes first: one scratch allocation for the whole op (a later, larger
  // ctx.scratch call would drop what the earlier one held).
  size_t scan_bytes = 0, diff_bytes = 0;
  EW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<int64_t*>(nullptr),
                                              static_cast<int64_t*>(nullptr), n, stream));
  if (with_lengths) {
    EW_CUDA_CHECK(cub::DeviceAdjacentDifference::SubtractLeft(nullptr, diff_bytes, static_cast<int64_t*>(nullptr),
                                                              n, ::cuda::std::minus<>{}, stream));
  }
  ScratchLayout layout;
  const size_t pointers_at = layout.add<const K*>(chunk_count);
  const size_t start_at = layout.add<int64_t>(chunk_count + 1);
  const size_t run_at = layout.add<int64_t>(n);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(std::max(scan_bytes, diff_bytes)));
  void* base = ctx.scratch(layout.bytes());
  const K** d_pointers = ScratchLayout::at<const K*>(base, pointers_at);
  int64_t* d_start = ScratchLayout::at<int64_t>(base, start_at);
  int64_t* d_run = ScratchLayout::at<int64_t>(base, run_at);
  void* d_cub = ScratchLayout::at<std::byte>(base, cub_at);

  EW_CUDA_CHECK(cudaMemcpyAsync(d_pointers, h_pointers.data(), chunk_count * sizeof(const K*),
                                cudaMemcpyHostToDevice, stream));
  EW_CUDA_CHECK(cudaMemcpyAsync(d_start, h_start.data(), (chunk_count + 1) * sizeof(int64_t),
                                cudaMemcpyHostToDevice, stream));
  const ChunkedKeys<K> keys{d_pointers, d_start, chunk_count};
  run_flags_kernel<K><<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(keys, n, d_run);
  EW_CUDA_CHECK_LAUNCH(stream);
  EW_CUDA_CHECK(cub::DeviceScan::InclusiveSum(d_cub, scan_bytes, d_run, d_run, n, stream));
  int64_t runs = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&runs, d_run + n - 1, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));  // also keeps the host tables alive until copied
  require_run_capacity(op, runs, values, lengths, with_lengths);

  if (with_lengths) {
    run_materialise_kernel<true, K>
        <<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(keys, d_run, n, values.data, lengths.data);
    EW_CUDA_CHECK_LAUNCH(stream);
    EW_CUDA_CHECK(cub::DeviceAdjacentDifference::SubtractLeft(d_cub, diff_bytes, lengths.data, runs,
                                                              ::cuda::std::minus<>{}, stream));
  } else {
    run_materialise_kernel<false, K>
        <<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(keys, d_run, n, values.data, nullptr);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  return runs;
}

#define EW_INSTANTIATE(K)                                                                                         \
  template int64_t run_length_encode_cuda<K>(const char*, std::span<const VectorView<const K>>, VectorView<K>, \
                                             VectorView<int64_t>, bool, Context&);
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::rle_detail
