// A seeded two-class graph collection that only structure separates: rings with
// random chords (class 0) against clusters of small cliques hung on a hub (class 1).
#include <algorithm>
#include <set>

#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

using EdgeSet = std::set<std::pair<int32_t, int32_t>>;

void add_undirected(EdgeSet& edges, int32_t u, int32_t v) {
  if (u == v) return;
  edges.emplace(u, v);
  edges.emplace(v, u);
}

EdgeSet ring_with_chords(int32_t n, CounterRng& rng) {
  EdgeSet edges;
  for (int32_t i = 0; i < n; ++i) add_undirected(edges, i, (i + 1) % n);
  for (int32_t c = 0; c < n / 5; ++c)
    add_undirected(edges, static_cast<int32_t>(rng.below(static_cast<uint64_t>(n))), static_cast<int32_t>(rng.below(static_cast<uint64_t>(n))));
  return edges;
}

EdgeSet cliques_on_a_hub(int32_t n, CounterRng& rng) {
  EdgeSet edges;
  int32_t start = 1;  // node 0 is the hub
  while (start < n) {
    const int32_t size = std::min<int32_t>(n - start, 3 + static_cast<int32_t>(rng.below(3)));
    for (int32_t a = start; a < start + size; ++a)
      for (int32_t b = a + 1; b < start + size; ++b) add_undirected(edges, a, b);
    add_undirected(edges, 0, start);
    start += size;
  }
  return edges;
}

}  // namespace

GraphDataset synthetic_graph_dataset(const SyntheticGraphsParams& params, uint64_t seed) {
  EW_REQUIRE(params.num_graphs >= 2, "synthetic_graph_dataset: num_graphs (", params.num_graphs, ") must be >= 2");
  EW_REQUIRE(params.min_nodes >= 4 && params.max_nodes >= params.min_nodes && params.max_nodes < (1 << 20),
             "synthetic_graph_dataset: node range [", params.min_nodes, ", ", params.max_nodes,
             "] must satisfy 4 <= min <= max < 2^20");
  GraphDataset d;
  d.name = "synthetic_graphs";
  d.num_classes = 2;
  CounterRng rng(seed, kSaltSyntheticGraphs, 0);
  for (int64_t g = 0; g < params.num_graphs; ++g) {
    const int64_t label = g % 2;
    const auto n = static_cast<int32_t>(params.min_nodes + static_cast<int64_t>(rng.below(static_cast<uint64_t>(params.max_nodes - params.min_nodes + 1))));
    const EdgeSet edges = label == 0 ? ring_with_chords(n, rng) : cliques_on_a_hub(n, rng);
    for (const auto& [u, v] : edges) {
      d.src.push_back(u);
      d.dst.push_back(v);
    }
    d.labels.push_back(label);
    d.node_offsets.push_back(d.node_offsets.back() + n);
    d.edge_offsets.push_back(d.edge_offsets.back() + static_cast<int64_t>(edges.size()));
  }
  d.note = "synthetic: rings with chords (class 0) vs cliques on a hub (class 1), seed " + std::to_string(seed);
  d.validate();
  return d;
}

}  // namespace edgewise::gnn
