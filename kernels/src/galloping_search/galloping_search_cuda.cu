// galloping_search CUDA driver: one thread per (segment, tile).
//
// A first kernel checks each segment record (its bits go straight into the
// validation word) and counts its tiles; CUB scans the counts; the search kernel
// then walks the flat tile range with a grid-stride loop, finds each tile's segment
// by binary search on the scan and runs the shared EW_HD tile search. The work is
// sized by the real tile counts, so one hub segment next to many small ones launches
// no idle threads, and the total is read on the device: no host synchronisation.
// Each thread ORs its tile's bits into a register and issues at most one atomicOr.
// Index arithmetic is 64-bit throughout.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "galloping_search/galloping_search_backends.hpp"
#include "galloping_search/galloping_search_core.hpp"

namespace edgewise::galloping_search_detail {

namespace {

constexpr int kThreads = 128;  // search threads diverge per query; small blocks schedule finer

__global__ void galloping_count_tiles_kernel(const int64_t* __restrict__ segments, int64_t segment_count,
                                             int64_t value_size, int64_t query_size, int64_t max_query_count,
                                             int64_t queries_per_tile, int64_t* __restrict__ tile_counts,
                                             uint32_t* __restrict__ validation) {
  for (int64_t s = detail::grid_thread_index(); s <= segment_count; s += detail::grid_thread_count()) {
    if (s == segment_count) {
      tile_counts[s] = 0;  // the scan's last entry becomes the total
      continue;
    }
    const Segment seg = load_segment(segments, s, value_size, query_size);
    const uint32_t errors = segment_errors(seg, value_size, query_size, max_query_count);
    if (errors != 0) atomicOr(validation, errors);
    tile_counts[s] = errors == 0 ? tile_count(seg.query_count, queries_per_tile) : 0;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    galloping_search_kernel(const T* __restrict__ values, const int64_t* __restrict__ order,
                            const T* __restrict__ queries, const int64_t* __restrict__ segments,
                            int64_t segment_count, int64_t value_size, int64_t query_size,
                            const int64_t* __restrict__ tile_start, int64_t queries_per_tile,
                            int64_t* __restrict__ positions, uint32_t* __restrict__ validation) {
  const int64_t total_tiles = tile_start[segment_count];
  uint32_t bits = 0;
  for (int64_t t = detail::grid_thread_index(); t < total_tiles; t += detail::grid_thread_count()) {
    const int64_t s = segment_of_tile(tile_start, segment_count, t);
    const Segment seg = load_segment(segments, s, value_size, query_size);
    bits |= search_segment_tile(values, order, queries, seg, t - tile_start[s], queries_per_tile, positions);
  }
  if (bits != 0) atomicOr(validation, bits);
}

__global__ void first_bad_order_kernel(const int64_t* __restrict__ order, int64_t count, int64_t value_count,
                                       unsigned long long* __restrict__ first_bad) {
  for (int64_t i = detail::grid_thread_index(); i < count; i += detail::grid_thread_count()) {
    if (order[i] < 0 || order[i] >= value_count) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace

template <class T>
void galloping_search_cuda(const Args<T>& args, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t S = args.segment_count;

  size_t cub_bytes = 0;
  EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<int64_t*>(nullptr),
                                              static_cast<int64_t*>(nullptr), S + 1, stream));
  ScratchLayout layout;
  const size_t word_at = layout.add<uint32_t>(1);
  const size_t counts_at = layout.add<int64_t>(S + 1);
  const size_t start_at = layout.add<int64_t>(S + 1);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(cub_bytes));
  void* base = ctx.scratch(layout.bytes());
  uint32_t* d_validation = args.validation != nullptr ? args.validation : ScratchLayout::at<uint32_t>(base, word_at);
  int64_t* d_counts = ScratchLayout::at<int64_t>(base, counts_at);
  int64_t* d_tile_start = ScratchLayout::at<int64_t>(base, start_at);

  if (args.validation == nullptr || !args.preserve_validation) {
    EW_CUDA_CHECK(cudaMemsetAsync(d_validation, 0, sizeof(uint32_t), stream));
  }
  if (S > 0) {
    galloping_count_tiles_kernel<<<detail::grid_size(S + 1, detail::kBlock), detail::kBlock, 0, stream>>>(
        args.segments, S, args.value_size, args.query_size, args.max_query_count, args.queries_per_tile, d_counts,
        d_validation);
    EW_CUDA_CHECK_LAUNCH(stream);
    EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ScratchLayout::at<std::byte>(base, cub_at), cub_bytes, d_counts,
                                                d_tile_start, S + 1, stream));
    // Well-formed segments hold at most Q queries between them when their query
    // ranges are disjoint (the precondition), so about Q / tile + S tiles; the loop
    // strides over any excess.
    const int64_t expected_tiles = args.query_size / args.queries_per_tile + S;
    if (args.query_size > 0) {
      galloping_search_kernel<T><<<detail::grid_size(expected_tiles, kThreads), kThreads, 0, stream>>>(
          args.values, args.order, args.queries, args.segments, S, args.value_size, args.query_size, d_tile_start,
          args.queries_per_tile, args.positions, d_validation);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
  }
  if (args.validation == nullptr) {
    EW_CUDA_CHECK(cudaMemcpyAsync(args.word_out, d_validation, sizeof(uint32_t), cudaMemcpyDeviceToHost, stream));
    EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

int64_t first_bad_order_cuda(VectorView<const int64_t> order, int64_t value_count, Context& ctx) {
  if (order.size == 0) return -1;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_bad_order_kernel<<<detail::grid_size(order.size, detail::kBlock), detail::kBlock, 0, stream>>>(
      order.data, order.size, value_count, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

template void galloping_search_cuda<float>(const Args<float>&, Context&);
template void galloping_search_cuda<uint32_t>(const Args<uint32_t>&, Context&);

}  // namespace edgewise::galloping_search_detail
