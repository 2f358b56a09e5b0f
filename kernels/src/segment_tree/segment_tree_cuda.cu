// SegmentTree CUDA driver.
//
// update, without the races of one-thread-per-update propagation (two threads
// whose leaves share an ancestor both rewrite it, each possibly from a stale
// child): (1) a stable radix sort of the batch's leaf indices (cub, positions as
// values) puts duplicates next to each other in batch order, and the last of each
// run writes its leaf (last write wins); (2) ancestors are recomputed level by
// level over that sorted list, each by exactly one owner (segment_tree_core.hpp),
// after the level below is complete. Small batches do all levels in one block
// (__syncthreads between levels); large ones launch one grid per level, and
// batches that touch most of the tree rebuild every level whole. All three give
// the same bits as the CPU driver: every node is the float sum of its children.
// sample: one thread per draw, the shared descent. 64-bit indices throughout.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "segment_tree/segment_tree_backends.hpp"
#include "segment_tree/segment_tree_core.hpp"

namespace edgewise::segment_tree_detail {

namespace {

constexpr int kPropagateBlock = 1024;
// Up to this many updates, one block propagates every level (one launch instead
// of one per level; a block's global writes are visible to it after __syncthreads).
constexpr int64_t kOneBlockMaxBatch = 16 * kPropagateBlock;

__global__ void first_bad_update_kernel(const int64_t* __restrict__ indices, const float* __restrict__ priorities,
                                        int64_t count, int64_t capacity, unsigned long long* __restrict__ first_bad) {
  for (int64_t k = detail::grid_thread_index(); k < count; k += detail::grid_thread_count()) {
    if (!valid_index(indices[k], capacity) || !valid_priority(priorities[k])) {
      atomicMin(first_bad, static_cast<unsigned long long>(k));
    }
  }
}

__global__ void iota_kernel(int64_t* __restrict__ out, int64_t count) {
  for (int64_t k = detail::grid_thread_index(); k < count; k += detail::grid_thread_count()) out[k] = k;
}

__global__ void write_leaves_kernel(float* tree, int64_t leaves, const int64_t* __restrict__ sorted,
                                    const int64_t* __restrict__ position, const float* __restrict__ priorities,
                                    int64_t count) {
  for (int64_t k = detail::grid_thread_index(); k < count; k += detail::grid_thread_count()) {
    if (last_of_run(sorted, k, count)) tree[leaves + sorted[k]] = stored_priority(priorities[position[k]]);
  }
}

// `tree` is read and written by the same kernel: no __restrict__ / read-only loads.
__global__ void propagate_level_kernel(float* tree, int64_t leaves, const int64_t* __restrict__ sorted,
                                       int64_t count, int level) {
  for (int64_t k = detail::grid_thread_index(); k < count; k += detail::grid_thread_count()) {
    const int64_t node = owned_ancestor(sorted, k, leaves, level);
    if (node != 0) recompute_node(tree, node);
  }
}

// One block, every level: launched with a single block only.
__global__ void __launch_bounds__(kPropagateBlock)
    propagate_all_levels_kernel(float* tree, int64_t leaves, const int64_t* __restrict__ sorted, int64_t count,
                                int levels) {
  for (int level = 1; level <= levels; ++level) {
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t node = owned_ancestor(sorted, k, leaves, level);
      if (node != 0) recompute_node(tree, node);
    }
    __syncthreads();  // this level's nodes are the next level's children
  }
}

// Recomputes nodes [first, 2 first): one whole level.
__global__ void rebuild_level_kernel(float* tree, int64_t first) {
  for (int64_t k = detail::grid_thread_index(); k < first; k += detail::grid_thread_count()) {
    recompute_node(tree, first + k);
  }
}

__global__ void sample_kernel(const float* __restrict__ tree, int64_t leaves, uint64_t seed, bool stratified,
                              int64_t* __restrict__ out, int64_t n) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    out[i] = sample_one(tree, leaves, seed, i, n, stratified);
  }
}

}  // namespace

int64_t first_bad_update_cuda(const int64_t* indices, const float* priorities, int64_t count, int64_t capacity,
                              Context& ctx) {
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_bad_update_kernel<<<detail::grid_size(count, detail::kBlock), detail::kBlock, 0, stream>>>(
      indices, priorities, count, capacity, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(
      cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

void update_cuda(float* tree, int64_t leaves, int levels, const int64_t* indices, const float* priorities,
                 int64_t count, Context& ctx) {
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  // Indices are in [0, L) = [0, 2^levels): sorting the low `levels` bits suffices.
  // They are sorted as unsigned (they are non-negative), positions ride along.
  const int end_bit = std::max(levels, 1);
  const auto* keys_in = reinterpret_cast<const uint64_t*>(indices);
  size_t cub_bytes = 0;
  EW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, keys_in, static_cast<uint64_t*>(nullptr),
                                                static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
                                                count, 0, end_bit, stream));
  ScratchLayout layout;
  const size_t sorted_at = layout.add<int64_t>(count);
  const size_t position_in_at = layout.add<int64_t>(count);
  const size_t position_at = layout.add<int64_t>(count);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(cub_bytes));
  void* base = ctx.scratch(layout.bytes());
  int64_t* d_sorted = ScratchLayout::at<int64_t>(base, sorted_at);
  int64_t* d_position_in = ScratchLayout::at<int64_t>(base, position_in_at);
  int64_t* d_position = ScratchLayout::at<int64_t>(base, position_at);

  const unsigned grid = detail::grid_size(count, detail::kBlock);
  iota_kernel<<<grid, detail::kBlock, 0, stream>>>(d_position_in, count);
  EW_CUDA_CHECK_LAUNCH(stream);
  EW_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ScratchLayout::at<std::byte>(base, cub_at), cub_bytes, keys_in,
                                                reinterpret_cast<uint64_t*>(d_sorted), d_position_in, d_position,
                                                count, 0, end_bit, stream));
  write_leaves_kernel<<<grid, detail::kBlock, 0, stream>>>(tree, leaves, d_sorted, d_position, priorities, count);
  EW_CUDA_CHECK_LAUNCH(stream);
  if (levels == 0) return;  // capacity 1: the leaf is the root

  if (rebuild_is_cheaper(count, leaves, levels)) {
    for (int64_t first = leaves / 2; first >= 1; first /= 2) {
      rebuild_level_kernel<<<detail::grid_size(first, detail::kBlock), detail::kBlock, 0, stream>>>(tree, first);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
  } else if (count <= kOneBlockMaxBatch) {
    propagate_all_levels_kernel<<<1, kPropagateBlock, 0, stream>>>(tree, leaves, d_sorted, count, levels);
    EW_CUDA_CHECK_LAUNCH(stream);
  } else {
    for (int level = 1; level <= levels; ++level) {
      propagate_level_kernel<<<grid, detail::kBlock, 0, stream>>>(tree, leaves, d_sorted, count, level);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
  }
}

void sample_cuda(const float* tree, int64_t leaves, uint64_t seed, bool stratified, int64_t* out, int64_t n,
                 Context& ctx) {
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  sample_kernel<<<detail::grid_size(n, detail::kBlock), detail::kBlock, 0, stream>>>(tree, leaves, seed, stratified,
                                                                                     out, n);
  EW_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace edgewise::segment_tree_detail
