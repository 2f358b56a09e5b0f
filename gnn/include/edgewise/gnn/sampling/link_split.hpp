// Train / valid / test splits of a graph's links with PyG's RandomLinkSplit semantics.
#pragma once

#include <cstdint>
#include <span>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/sampling/negative_sampling.hpp"

namespace edgewise::gnn {

// PyG's RandomLinkSplit(num_val, num_test, is_undirected, add_negative_train_samples=False,
// neg_sampling_ratio=1): the links are shuffled (seeded) and cut into
// int(num_val * L) validation, int(num_test * L) test and the rest training links.
//   is_undirected: a link is an unordered pair {u, v} (u < v, both directions of an
//       input edge count once); its two directions always land in the same split,
//       and the message-passing graphs hold both directions of their links.
//   otherwise: a link is an ordered pair (u, v) and the graphs hold it as given.
// Self loops and duplicate edges are no links (GCN adds self loops itself).
// Message passing (PyG): train_graph holds the training links only (used to score
// training and validation links), test_graph the training and validation links
// (used for the test links); no test link is ever in a message-passing graph.
// Validation and test get as many negative pairs as positive ones, drawn once with
// sample_negative_edges against the full input graph. Training negatives are not
// part of the split (drawn anew each epoch against train_graph).
struct LinkSplitOptions {
  double num_val = 0.05;   // fraction of the links, in [0, 1)
  double num_test = 0.1;   // fraction of the links, in [0, 1), num_val + num_test < 1
  bool is_undirected = true;
  uint64_t seed = 0;
};

struct LinkSplit {
  int64_t num_nodes = 0;
  NodePairs train_pos, valid_pos, valid_neg, test_pos, test_neg;  // undirected: u < v for positives
  Graph train_graph, test_graph;                                  // on the host
};

// Throws std::invalid_argument naming the option or the edge at fault (ids outside
// [0, num_nodes), unequal src/dst lengths, fractions outside their range, or too few
// links to leave a training link).
LinkSplit random_link_split(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes,
                            const LinkSplitOptions& options = {});

}  // namespace edgewise::gnn
