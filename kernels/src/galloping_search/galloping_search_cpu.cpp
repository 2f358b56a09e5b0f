// galloping_search CPU driver (OpenMP).
//
// One sequential pass over the segment records checks each one and counts its
// tiles (an exclusive scan into scratch); then threads take chunks of consecutive
// tiles dynamically, so one huge segment is spread over every thread and a thread
// delayed by a neighbour on a shared machine does not hold the others up. Each tile
// is searched by the shared EW_HD core exactly as one GPU thread searches it.
// Tiles write disjoint outputs: no atomics; the validation bits are OR-reduced.
#include <omp.h>

#include <algorithm>

#include "galloping_search/galloping_search_backends.hpp"
#include "galloping_search/galloping_search_core.hpp"

namespace edgewise::galloping_search_detail {

namespace {
// Queries per dynamic chunk (whole tiles): enough to amortise the scheduling and
// the segment lookup; smaller inputs are cut into about kChunksPerThread chunks per
// thread so that they still balance.
constexpr int64_t kChunkQueries = 2048;
constexpr int64_t kChunksPerThread = 8;
}  // namespace

template <class T>
void galloping_search_cpu(const Args<T>& args, Context& ctx) {
  const int64_t S = args.segment_count;
  const int64_t tile = args.queries_per_tile;
  int64_t* tile_start = static_cast<int64_t*>(ctx.scratch(static_cast<std::size_t>(S + 1) * sizeof(int64_t)));

  uint32_t bits = 0;
  tile_start[0] = 0;
  for (int64_t s = 0; s < S; ++s) {
    const Segment seg = load_segment(args.segments, s, args.value_size, args.query_size);
    const uint32_t errors = segment_errors(seg, args.value_size, args.query_size, args.max_query_count);
    bits |= errors;
    tile_start[s + 1] = tile_start[s] + (errors == 0 ? tile_count(seg.query_count, tile) : 0);
  }
  const int64_t total_tiles = tile_start[S];
  const int64_t balanced = total_tiles / (static_cast<int64_t>(omp_get_max_threads()) * kChunksPerThread);
  const int64_t chunk_tiles = std::clamp<int64_t>(balanced, 1, std::max<int64_t>(1, kChunkQueries / tile));
  const int64_t chunks = (total_tiles + chunk_tiles - 1) / chunk_tiles;

#pragma omp parallel for schedule(dynamic, 1) reduction(| : bits)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t first = c * chunk_tiles;
    const int64_t last = std::min(total_tiles, first + chunk_tiles);
    int64_t s = segment_of_tile(tile_start, S, first);
    Segment seg = load_segment(args.segments, s, args.value_size, args.query_size);
    for (int64_t t = first; t < last; ++t) {
      if (t >= tile_start[s + 1]) {  // next segment with tiles
        s = segment_of_tile(tile_start, S, t);
        seg = load_segment(args.segments, s, args.value_size, args.query_size);
      }
      bits |= search_segment_tile(args.values, args.order, args.queries, seg, t - tile_start[s], tile,
                                  args.positions);
    }
  }

  if (args.validation != nullptr) {
    *args.validation = args.preserve_validation ? (*args.validation | bits) : bits;
  } else {
    *args.word_out = bits;
  }
}

int64_t first_bad_order_cpu(VectorView<const int64_t> order, int64_t value_count) {
  int64_t first_bad = order.size;
#pragma omp parallel for schedule(static) reduction(min : first_bad)
  for (int64_t i = 0; i < order.size; ++i) {
    if ((order.data[i] < 0 || order.data[i] >= value_count) && i < first_bad) first_bad = i;
  }
  return first_bad == order.size ? -1 : first_bad;
}

template void galloping_search_cpu<float>(const Args<float>&, Context&);
template void galloping_search_cpu<uint32_t>(const Args<uint32_t>&, Context&);

}  // namespace edgewise::galloping_search_detail
