// Trainer: full-batch node classification on the one epoch loop (epoch_loop.hpp) —
// evaluation on train/valid/test ("train_acc", "valid_acc", "valid_loss", "test_acc"),
// model selection by validation accuracy, early stopping, a learning-rate schedule,
// a progress line with ETA, checkpoints, a metrics log (CSV/JSON) and an SVG plot.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn {

// A dataset made ready for training on a device.
struct TrainData {
  std::string name;
  Graph graph;
  NodeFeatures features;
  IndexTensor labels;  // [N, 1]
  IndexTensor train_idx, valid_idx, test_idx;
  int64_t num_classes = 0;
};

struct PrepareOptions {
  bool normalize_features = true;  // row-normalise (PyG's NormalizeFeatures: x / max(row sum, 1))
  FeatureFormat features = FeatureFormat::Auto;
  double sparse_threshold = 0.1;   // Auto: CSR at or below this density
  bool require_labels = true;      // false: an unlabelled graph is fine (link prediction)
};
TrainData prepare(const Dataset& dataset, Device device, const PrepareOptions& options = {});

// The node task's options: TrainOptions as they are (train_options.hpp).
using TrainerOptions = TrainOptions;

class Trainer {
 public:
  Trainer(NodeClassifier& model, const TrainData& data, TrainerOptions options);
  TrainResult fit();
  // Accuracy of the current model on `rows` (evaluation mode).
  double evaluate(const IndexTensor& rows);

 private:
  NodeClassifier& model_;
  const TrainData& data_;
  TrainerOptions options_;
  Generator generator_;
};

}  // namespace edgewise::gnn
