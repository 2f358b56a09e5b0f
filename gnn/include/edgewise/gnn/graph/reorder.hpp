// Node reordering for locality: relabel the nodes so that the rows an aggregation
// gathers (x[src] for the edges into one node) lie close together in memory.
//
// Orderings:
//  None    the input order (identity permutation).
//  Degree  descending in-degree (ties: lower original id first): the hub rows every
//          destination gathers sit together at the front and stay in cache.
//  Rcm     reverse Cuthill–McKee on the symmetrised graph: a breadth-first search
//          from a pseudo-peripheral node of each connected component (components in
//          order of their lowest-degree node), neighbours visited in ascending degree,
//          then the whole order reversed. It narrows the bandwidth max |new(u) -
//          new(v)| over edges, so a destination's sources are near it and near each
//          other. Deterministic (no randomness; ties broken by original id).
//          Own implementation (O(E log d) time, O(N + E) memory): Boost.Graph's
//          cuthill_mckee_ordering needs an adjacency_list copy of the graph (tens of
//          bytes per edge, seconds at 10M edges).
//
// A reordering is applied once, before training (reorder_dataset, Graph::reorder),
// and the permutation is kept: rows_in_original_order maps every per-node result
// (logits, embeddings, predictions) back to the caller's order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn {

enum class Ordering : int { None, Degree, Rcm };

// "none", "degree", "rcm"; std::invalid_argument naming the value otherwise.
Ordering parse_ordering(const std::string& name);
const char* to_string(Ordering ordering);

// A relabelling of N nodes: new node i is old node new_to_old[i]; old_to_new is the
// inverse (old_to_new[new_to_old[i]] == i).
struct NodePermutation {
  std::vector<int64_t> new_to_old;
  std::vector<int64_t> old_to_new;

  int64_t size() const { return static_cast<int64_t>(new_to_old.size()); }
  bool is_identity() const;
  static NodePermutation identity(int64_t num_nodes);
  // Validates that `new_to_old` is a bijection on [0, N) (std::invalid_argument naming
  // the first repeated or out-of-range entry) and builds the inverse.
  static NodePermutation from_new_to_old(std::vector<int64_t> new_to_old);
};

// The ordering of the graph with edges src[e] -> dst[e] on num_nodes nodes (host data,
// ids already validated by the caller or checked here: std::invalid_argument).
NodePermutation node_ordering(int64_t num_nodes, std::span<const int64_t> src, std::span<const int64_t> dst,
                              Ordering ordering);

// max |p(src[e]) - p(dst[e])| over the edges, p = permutation.old_to_new (identity when
// `permutation` is null); 0 without edges.
int64_t bandwidth(std::span<const int64_t> src, std::span<const int64_t> dst,
                  const NodePermutation* permutation = nullptr);

// Graph::reorder's result: the relabelled graph and the permutation (graph node i is
// node permutation.new_to_old[i] of the input graph).
struct ReorderedGraph {
  Graph graph;
  NodePermutation permutation;
};

// The dataset with nodes relabelled: edge_index ids mapped (edge order kept), feature
// rows and labels permuted, splits mapped and sorted ascending again. Validates the
// dataset first (Dataset::validate) and the permutation's size.
Dataset reorder_dataset(const Dataset& dataset, const NodePermutation& permutation);

// Per-node rows [N, C] in the permuted order -> the original order:
// out[old] = rows[old_to_new[old]]. Host or device tensor (returns one on the same device).
Tensor rows_in_original_order(const Tensor& rows, const NodePermutation& permutation);

}  // namespace edgewise::gnn
