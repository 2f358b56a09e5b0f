// Uniform negative sampling: rejection against the graph's edges (Graph::find_edges),
// with an exact fallback over the enumerated non-edges for dense graphs.
#include "edgewise/gnn/sampling/negative_sampling.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "sample_negative_edges";

// Every ordered pair (u, v), u != v, with no edge u -> v.
NodePairs enumerate_non_edges(const Graph& graph) {
  const int64_t N = graph.num_nodes();
  NodePairs candidates;
  for (int64_t u = 0; u < N; ++u) {
    for (int64_t v = 0; v < N; ++v) {
      if (u == v) continue;
      candidates.src.push_back(u);
      candidates.dst.push_back(v);
    }
  }
  const std::vector<int64_t> ids = graph.find_edges(candidates.src, candidates.dst);
  NodePairs out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] >= 0) continue;
    out.src.push_back(candidates.src[i]);
    out.dst.push_back(candidates.dst[i]);
  }
  return out;
}

}  // namespace

NodePairs sample_negative_edges(const Graph& graph, int64_t count, uint64_t seed,
                                const NegativeSamplingOptions& options) {
  EW_REQUIRE(graph.defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(count >= 0, kOp, ": count (", count, ") must be >= 0");
  NodePairs out;
  if (count == 0) return out;
  const int64_t N = graph.num_nodes();
  EW_REQUIRE(N >= 2, kOp, ": a graph of ", N, " node(s) has no pair of distinct nodes");
  out.src.reserve(static_cast<size_t>(count));
  out.dst.reserve(static_cast<size_t>(count));
  CounterRng rng(seed, kSaltNegativePairs, 0);
  const auto n = static_cast<uint64_t>(N);
  std::vector<int64_t> u, v;
  for (int64_t round = 0; round < options.max_rounds && out.size() < count; ++round) {
    const auto missing = static_cast<size_t>(count - out.size());
    u.resize(missing);
    v.resize(missing);
    for (size_t i = 0; i < missing; ++i) {
      u[i] = static_cast<int64_t>(rng.below(n));
      v[i] = static_cast<int64_t>(rng.below(n));
    }
    const std::vector<int64_t> ids = graph.find_edges(u, v);
    for (size_t i = 0; i < missing; ++i) {
      if (u[i] == v[i] || ids[i] >= 0) continue;
      out.src.push_back(u[i]);
      out.dst.push_back(v[i]);
    }
  }
  if (out.size() == count) return out;
  // A dense graph: rejection keeps failing, so draw the rest from the non-edges
  // themselves (still uniform over them), when there are few enough node pairs.
  EW_REQUIRE(N * (N - 1) <= options.max_enumerated_pairs, kOp, ": only ", out.size(), " of ", count,
             " negative pairs found after ", options.max_rounds, " rejection rounds; the graph (", N, " nodes, ",
             graph.num_edges(), " edges) is too dense to sample by rejection and has more than ",
             options.max_enumerated_pairs, " node pairs to enumerate");
  const NodePairs non_edges = enumerate_non_edges(graph);
  EW_REQUIRE(non_edges.size() > 0, kOp, ": no negative pair exists: every ordered pair of distinct nodes among the ",
             N, " nodes is an edge");
  const auto available = static_cast<uint64_t>(non_edges.size());
  while (out.size() < count) {
    const auto k = static_cast<size_t>(rng.below(available));
    out.src.push_back(non_edges.src[k]);
    out.dst.push_back(non_edges.dst[k]);
  }
  return out;
}

}  // namespace edgewise::gnn
