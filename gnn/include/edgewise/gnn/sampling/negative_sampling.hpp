// Negative sampling for link prediction: node pairs that are not edges, uniform and
// seeded (rejection through Graph::find_edges, exact enumeration for dense graphs).
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// Node pairs (src[i], dst[i]); the candidate or known links of a split.
struct NodePairs {
  std::vector<int64_t> src, dst;
  int64_t size() const { return static_cast<int64_t>(src.size()); }
};

struct NegativeSamplingOptions {
  // Rejection rounds: each round draws as many pairs as are still missing and keeps
  // those that are neither self loops nor edges. When pairs are still missing after
  // these rounds (a dense graph), the remaining ones are drawn exactly from the
  // enumerated non-edges, if there are at most max_enumerated_pairs node pairs.
  int64_t max_rounds = 16;
  int64_t max_enumerated_pairs = int64_t{1} << 26;
};

// `count` ordered pairs (u, v), each uniform over the pairs with u != v and no edge
// u -> v in `graph` (a CPU graph; the check is Graph::find_edges), independently
// (pairs may repeat). The same (graph, count, seed) give the same pairs. Throws
// std::invalid_argument when count < 0, or when count > 0 and the graph has no
// such pair (every ordered pair of distinct nodes is an edge, or N < 2), or when a
// dense graph is too large to enumerate its remaining non-edges.
NodePairs sample_negative_edges(const Graph& graph, int64_t count, uint64_t seed,
                                const NegativeSamplingOptions& options = {});

}  // namespace edgewise::gnn
