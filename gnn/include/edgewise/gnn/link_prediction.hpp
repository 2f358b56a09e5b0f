// Link prediction: negative sampling, train/valid/test edge splits with PyG's
// RandomLinkSplit semantics, the edge-pair dot-product decoder (differentiable),
// ranking metrics (AUC, Hits@K) and the full-batch training loop of a GCN encoder
// with a dot-product decoder (PyG's examples/link_pred.py).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/autograd.hpp"
#include "edgewise/gnn/dataset.hpp"
#include "edgewise/gnn/graph.hpp"
#include "edgewise/gnn/sparse_tensor.hpp"

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

// Edge-pair decoder: out[i] = <z[src[i]], z[dst[i]]> as [P, 1], differentiable in z.
// src and dst are [P] or [P, 1] ids in [0, z.rows()) on z's device (std::invalid_argument
// naming the argument otherwise). Runs on the host; device tensors go through host copies.
Variable pair_dot(const Variable& z, const IndexTensor& src, const IndexTensor& dst);

// Area under the ROC curve of `positive` against `negative` scores: the probability
// that a random positive scores above a random negative, ties counting one half
// (exact, O((P + N) log(P + N))). Throws std::invalid_argument when either list is
// empty or holds a NaN.
double roc_auc(std::span<const float> positive, std::span<const float> negative);

// OGB's Hits@K: the fraction of positives scoring strictly above the K-th highest
// negative score; 1 when there are fewer than K negatives. Throws
// std::invalid_argument when k < 1 or `positive` is empty.
double hits_at_k(std::span<const float> positive, std::span<const float> negative, int64_t k);

struct LinkTrainOptions {
  int64_t hidden_features = 128;  // GCN encoder: in -> hidden -> out (PyG link_pred.py)
  int64_t out_features = 64;
  int64_t layers = 2;
  float dropout = 0.0f;       // between layers
  float lr = 0.01f;           // Adam
  float weight_decay = 0.0f;  // L2 on every parameter
  int64_t epochs = 100;
  int64_t hits_k = 50;
  uint64_t seed = 0;       // initialisation, training negatives, dropout
  int64_t log_every = 10;  // progress line every this many epochs (0: silent)
};

struct LinkEpochRecord {
  int64_t epoch = 0;
  double loss = 0, valid_auc = 0, test_auc = 0;
  double epoch_ms = 0;  // forward + backward + optimizer step
};

struct LinkTrainResult {
  std::vector<LinkEpochRecord> history;
  int64_t best_epoch = 0;  // highest validation AUC (first on ties)
  double best_valid_auc = 0, test_auc = 0, valid_hits_at_k = 0, test_hits_at_k = 0;  // at best_epoch
  double epoch_ms_median = 0;
  double total_seconds = 0;
  std::string model_description;
  int64_t num_parameters = 0;
};

// Trains a GCN encoder (GCNConv layers, ReLU between them, PyG semantics) with a
// dot-product decoder and BCE-with-logits loss on the split's training links (each
// epoch: as many fresh negatives as training links, drawn against train_graph) and
// selects the epoch with the best validation AUC. Validation links are scored over
// train_graph, test links over test_graph. `features` [N, F] lives on `device`.
// Throws std::invalid_argument for a split without validation or test links, and
// when the training loss turns NaN or infinite (naming the epoch).
LinkTrainResult train_link_predictor(const LinkSplit& split, const NodeFeatures& features,
                                     const LinkTrainOptions& options, Device device = Device::cpu());

}  // namespace edgewise::gnn
