// CscGraph::from_coo: a stable counting sort of the edges by destination; narrow_ids.
#include "edgewise/gnn/sampling/csc_graph.hpp"

#include <algorithm>
#include <climits>
#include <type_traits>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {
constexpr const char* kOp = "CscGraph.from_coo";
}  // namespace

CscGraph CscGraph::from_coo(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes,
                            std::span<const double> edge_weight, std::span<const int64_t> edge_time,
                            std::span<const int64_t> node_time, bool sort_by_time, bool wide_ids) {
  const int64_t E = static_cast<int64_t>(src.size()), N = num_nodes;
  EW_REQUIRE(N >= 0, kOp, ": num_nodes (", N, ") must be >= 0");
  EW_REQUIRE(dst.size() == src.size(), kOp, ": edge_index rows must have one length (", src.size(), " and ",
             dst.size(), ")");
  EW_REQUIRE(edge_weight.empty() || static_cast<int64_t>(edge_weight.size()) == E, kOp, ": edge_weight must hold ",
             E, " entries, one per edge (got ", edge_weight.size(), ")");
  EW_REQUIRE(edge_time.empty() || static_cast<int64_t>(edge_time.size()) == E, kOp, ": edge_time must hold ", E,
             " entries, one per edge (got ", edge_time.size(), ")");
  EW_REQUIRE(node_time.empty() || static_cast<int64_t>(node_time.size()) == N, kOp, ": node_time must hold ", N,
             " entries, one per node (got ", node_time.size(), ")");
  int64_t bad_src = -1, bad_dst = -1;
#pragma omp parallel for reduction(max : bad_src, bad_dst) if (E > (1 << 16))
  for (int64_t k = 0; k < E; ++k) {
    if (src[k] < 0 || src[k] >= N) bad_src = std::max(bad_src, k);
    if (dst[k] < 0 || dst[k] >= N) bad_dst = std::max(bad_dst, k);
  }
  EW_REQUIRE(bad_src < 0, kOp, ": edge_index[0][", bad_src, "] (", bad_src >= 0 ? src[bad_src] : 0,
             ") must lie in [0, ", N, ")");
  EW_REQUIRE(bad_dst < 0, kOp, ": edge_index[1][", bad_dst, "] (", bad_dst >= 0 ? dst[bad_dst] : 0,
             ") must lie in [0, ", N, ")");

  CscGraph g;
  g.colptr.assign(static_cast<size_t>(N + 1), 0);
  for (int64_t k = 0; k < E; ++k) ++g.colptr[dst[k] + 1];
  for (int64_t v = 0; v < N; ++v) g.colptr[v + 1] += g.colptr[v];
  // Built directly in the width kept, so no 64-bit copy of the ids ever exists beside it.
  const auto fill = [&](auto& edge_id, auto& row) {
    using Id = typename std::remove_reference_t<decltype(edge_id)>::value_type;
    edge_id.resize(static_cast<size_t>(E));
    {
      std::vector<int64_t> next(g.colptr.begin(), g.colptr.end() - 1);
      for (int64_t k = 0; k < E; ++k) edge_id[next[dst[k]]++] = static_cast<Id>(k);
    }
    if (sort_by_time && (!edge_time.empty() || !node_time.empty())) {
      const auto time_of = [&](int64_t k) { return edge_time.empty() ? node_time[src[k]] : edge_time[k]; };
#pragma omp parallel for schedule(dynamic, 1024) if (E > (1 << 16))
      for (int64_t v = 0; v < N; ++v) {
        std::stable_sort(edge_id.begin() + g.colptr[v], edge_id.begin() + g.colptr[v + 1],
                         [&](Id a, Id b) { return time_of(a) < time_of(b); });
      }
    }
    row.resize(static_cast<size_t>(E));
    if (!edge_weight.empty()) g.edge_weight.resize(static_cast<size_t>(E));
    if (!edge_time.empty()) g.edge_time.resize(static_cast<size_t>(E));
#pragma omp parallel for if (E > (1 << 16))
    for (int64_t p = 0; p < E; ++p) {
      const int64_t k = edge_id[p];
      row[p] = static_cast<Id>(src[k]);
      if (!edge_weight.empty()) g.edge_weight[p] = edge_weight[k];
      if (!edge_time.empty()) g.edge_time[p] = edge_time[k];
    }
  };
  if (!wide_ids && fits_narrow_ids(N, E)) {
    fill(g.edge_id32, g.row32);
  } else {
    fill(g.edge_id, g.row);
  }
  g.node_time.assign(node_time.begin(), node_time.end());
  return g;
}

void CscGraph::narrow_ids() {
  const int64_t N = colptr.empty() ? 0 : static_cast<int64_t>(colptr.size()) - 1;
  if (!fits_narrow_ids(N, static_cast<int64_t>(std::max(row.size(), edge_id.size())))) return;
  const auto narrowed = [](std::vector<int64_t>& wide, std::vector<int32_t>& narrow) {
    if (wide.empty()) return;
    // Entries outside int32 stay wide: the sampler's checks then name them as given.
    for (const int64_t id : wide) {
      if (id < INT32_MIN || id > INT32_MAX) return;
    }
    narrow.assign(wide.begin(), wide.end());
    std::vector<int64_t>().swap(wide);
  };
  narrowed(row, row32);
  narrowed(edge_id, edge_id32);
}

}  // namespace edgewise::gnn
