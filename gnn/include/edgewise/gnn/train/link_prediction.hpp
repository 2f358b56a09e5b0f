// Link prediction: ranking metrics (AUC, Hits@K) and the full-batch training of a GCN
// encoder with a dot-product decoder (PyG's examples/link_pred.py), on the pieces in
// sampling/ (negative sampling, RandomLinkSplit) and message_passing/ (pair_dot),
// which this header includes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/message_passing/pair_dot.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"
#include "edgewise/gnn/sampling/link_split.hpp"
#include "edgewise/gnn/sampling/negative_sampling.hpp"
#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn {

// Area under the ROC curve of `positive` against `negative` scores: the probability
// that a random positive scores above a random negative, ties counting one half
// (exact, O((P + N) log(P + N))). Throws std::invalid_argument when either list is
// empty or holds a NaN.
double roc_auc(std::span<const float> positive, std::span<const float> negative);

// OGB's Hits@K: the fraction of positives scoring strictly above the K-th highest
// negative score; 1 when there are fewer than K negatives. Throws
// std::invalid_argument when k < 1 or `positive` is empty.
double hits_at_k(std::span<const float> positive, std::span<const float> negative, int64_t k);

// TrainOptions (epochs, lr and its schedule, optimizer, weight decay, seed —
// initialisation, training negatives, dropout —, eval_every, patience, selection by
// validation AUC, output files, checkpoints, ...) with link_pred.py's defaults, and
// the encoder's shape.
struct LinkTrainOptions : TrainOptions {
  LinkTrainOptions() {
    epochs = 100;
    weight_decay = 0.0f;  // L2 on every parameter
  }
  int64_t hidden_features = 128;  // GCN encoder: in -> hidden -> out (PyG link_pred.py)
  int64_t out_features = 64;
  int64_t layers = 2;
  float dropout = 0.0f;           // between layers
  int64_t hits_k = 50;
};

// The history's metrics are "valid_auc", "test_auc", "valid_hits_at_k" and
// "test_hits_at_k" (K = hits_k); the selected epoch's are copied out below.
struct LinkTrainResult : TrainResult {
  double best_valid_auc = 0, test_auc = 0, valid_hits_at_k = 0, test_hits_at_k = 0;  // at best_epoch
  std::string model_description;
  int64_t num_parameters = 0;
};

// Trains a GCN encoder (GCNConv layers, ReLU between them, PyG semantics) with a
// dot-product decoder and BCE-with-logits loss on the split's training links (each
// epoch: as many fresh negatives as training links, drawn against train_graph) and
// selects the epoch with the best validation AUC (earliest on ties), on the one epoch
// loop (checkpoints, resume, patience, schedule, metric files as every task).
// Validation links are scored over train_graph, test links over test_graph.
// `features` [N, F] lives on `device`. Throws std::invalid_argument for a split
// without validation or test links; NonFiniteLossError when the training loss turns
// NaN or infinite (options.nonfinite_loss).
LinkTrainResult train_link_predictor(const LinkSplit& split, const NodeFeatures& features,
                                     const LinkTrainOptions& options, Device device = Device::cpu());

}  // namespace edgewise::gnn
