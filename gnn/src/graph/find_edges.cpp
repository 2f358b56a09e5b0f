// Graph::find_edges: batched edge lookup by galloping search in the transposed CSR.
//
// Why galloping: the transposed CSR keeps, for each source u, the destinations of
// u's out-edges sorted ascending (a stable sort by source of the destination-sorted
// edges). Sorting the queries by (source, destination) turns the batch into one
// ascending run of destinations per source segment, so each lookup can gallop
// forward from the previous hit in the same segment: it costs O(log d) for a gap
// of d positions between consecutive answers, instead of O(log degree) per query
// for independent binary searches — a dense batch (many queries into one
// high-degree node, as in negative sampling and split construction) walks each
// segment about once.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/galloping_search.hpp"

namespace edgewise::gnn {

namespace {
constexpr const char* kOp = "Graph::find_edges";
}  // namespace

std::vector<int64_t> Graph::find_edges(std::span<const int64_t> src, std::span<const int64_t> dst) const {
  EW_REQUIRE(defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(src.size() == dst.size(), kOp, ": src has ", src.size(), " ids but dst has ", dst.size());
  EW_REQUIRE(device().is_cpu(), kOp, ": runs on CPU graphs only (this graph is on ", device().str(),
             "); move it with to(Device::cpu()) first");
  const int64_t N = num_nodes();
  const int64_t Q = static_cast<int64_t>(src.size());
  for (int64_t i = 0; i < Q; ++i) {
    EW_REQUIRE(src[i] >= 0 && src[i] < N, kOp, ": src[", i, "] (", src[i], ") must lie in [0, ", N, ")");
    EW_REQUIRE(dst[i] >= 0 && dst[i] < N, kOp, ": dst[", i, "] (", dst[i], ") must lie in [0, ", N, ")");
  }
  std::vector<int64_t> out(static_cast<size_t>(Q), -1);
  if (Q == 0 || num_edges() == 0) return out;

  // Queries ordered by (source, destination): one ascending run per source segment.
  std::vector<int64_t> order(static_cast<size_t>(Q));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return src[a] != src[b] ? src[a] < src[b] : dst[a] < dst[b];
  });
  const TransposedCsr& t = transposed();
  const int64_t* t_offsets = t.offsets.data();
  std::vector<uint32_t> queries(static_cast<size_t>(Q));
  std::vector<int64_t> segments;  // [S, 4]: valueOffset, valueCount, queryOffset, queryCount
  for (int64_t i = 0; i < Q;) {
    const int64_t u = src[order[i]];
    int64_t j = i;
    for (; j < Q && src[order[j]] == u; ++j) queries[j] = static_cast<uint32_t>(dst[order[j]]);
    segments.insert(segments.end(), {t_offsets[u], t_offsets[u + 1] - t_offsets[u], i, j - i});
    i = j;
  }
  const int64_t S = static_cast<int64_t>(segments.size() / 4);
  // Node ids are non-negative int32, so their bits read as uint32 keep the order
  // (signed and unsigned variants of one type may alias).
  const auto* values = reinterpret_cast<const uint32_t*>(t.destinations.data());
  std::vector<int64_t> positions(static_cast<size_t>(Q));
  uint32_t validation = 0;
  Context ctx;
  GallopingSearchOptions options;
  options.queries_per_tile = 64;
  galloping_search<uint32_t>(VectorView<const uint32_t>(values, num_edges()), VectorView<const int64_t>(),
                             VectorView<const uint32_t>(queries.data(), Q),
                             MatrixView<const int64_t>(segments.data(), S, 4), VectorView<int64_t>(positions.data(), Q),
                             VectorView<uint32_t>(&validation, 1), options, ctx);
  EW_REQUIRE(validation == 0, kOp, ": internal error: galloping_search reported validation word ", validation);

  const int64_t* t_edge_ids = t.edge_ids.data();
  for (int64_t s = 0; s < S; ++s) {
    const int64_t end = segments[4 * s] + segments[4 * s + 1];
    for (int64_t q = segments[4 * s + 2]; q < segments[4 * s + 2] + segments[4 * s + 3]; ++q) {
      const int64_t p = positions[q];
      if (p < end && values[p] == queries[q]) out[order[q]] = t_edge_ids[p];
    }
  }
  return out;
}

}  // namespace edgewise::gnn
