// Trainer: the full-batch node-classification loop most users want — epochs,
// evaluation on train/valid/test, model selection by validation accuracy, early
// stopping, a progress line with ETA, a metrics log (CSV/JSON) and an SVG plot of
// the training curves.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/nn/models.hpp"

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

enum class OptimizerKind { Adam, AdamW, Sgd };
OptimizerKind parse_optimizer(const std::string& name);

// Which epoch's model the reported accuracies come from.
enum class ModelSelection {
  BestValidation,  // highest validation accuracy (ties: lower validation loss), as PyG's examples
  LastEpoch,       // the model after the last epoch (Kipf & Welling's 200-epoch protocol); better
                   // when the validation set is too small for selection to help
};

// "best-valid" or "last"; throws std::invalid_argument otherwise.
ModelSelection parse_model_selection(const std::string& name);

struct EpochRecord;

// What fit() does when an epoch's training loss is NaN or infinite (the run has
// diverged: a learning rate far too high, or bad input).
enum class NonFiniteLoss {
  Error,  // throw NonFiniteLossError naming the epoch, before that epoch's update
  Warn,   // print one warning on stderr and go on
};
// "error" or "warn"; std::invalid_argument otherwise.
NonFiniteLoss parse_nonfinite_loss(const std::string& name);

// Thrown by fit() under NonFiniteLoss::Error.
class NonFiniteLossError : public std::runtime_error {
 public:
  NonFiniteLossError(const std::string& message, int64_t epoch, double loss)
      : std::runtime_error(message), epoch_(epoch), loss_(loss) {}
  int64_t epoch() const { return epoch_; }  // 1-based
  double loss() const { return loss_; }

 private:
  int64_t epoch_;
  double loss_;
};

// (key, value) pairs identifying a run, e.g. {"--dataset", "cora"}.
using RunTags = std::vector<std::pair<std::string, std::string>>;

struct TrainerOptions {
  int64_t epochs = 200;
  float lr = 0.01f;
  float weight_decay = 5e-4f;
  OptimizerKind optimizer = OptimizerKind::Adam;
  float momentum = 0.9f;      // SGD
  int64_t patience = 0;       // stop after this many epochs without a better validation accuracy (0: never)
  ModelSelection selection = ModelSelection::BestValidation;
  uint64_t seed = 0;          // dropout stream
  int64_t log_every = 10;     // progress line every this many epochs (0: silent)
  NonFiniteLoss nonfinite_loss = NonFiniteLoss::Error;
  // Output files, checked writable (check_writable_file) before the first epoch and
  // written at the end when set.
  std::string metrics_csv;    // per-epoch log
  std::string metrics_json;
  std::string plot_svg;       // training curves
  // Called after every epoch (after its progress line); returning false stops training
  // (TrainResult::stopped_early). Exceptions propagate out of fit().
  std::function<bool(const EpochRecord&)> on_epoch;
  // Checkpoints (.npz, written atomically): every checkpoint_every epochs (0: only at
  // the end) and after the last epoch, when checkpoint_path is set. resume_path
  // continues a run from its checkpoint up to `epochs` in total; with the same other
  // options the result is bitwise that of the uninterrupted run. A checkpoint holds
  // "model.<parameter name>", "optim.*" (kind, per-parameter state), "rng.*" (the
  // dropout Generator), "trainer.*" (epoch, stopped_early, elapsed seconds),
  // "history.*" (one array per EpochRecord field) and "selection.*" (best epoch and
  // its metrics, patience count); the full list is in src/train/checkpoint.cpp.
  // A checkpoint that does not fit the model or optimizer is refused, naming the
  // key, before anything changes.
  std::string checkpoint_path;
  int64_t checkpoint_every = 0;
  std::string resume_path;
  // What the run was made from and must not change across a resume (the dataset,
  // the options that change results): written into checkpoints as "run.<key>";
  // resuming where any differs (or one is missing) is refused, naming the key and
  // both values. Parameters or optimizer state that are not finite are refused too.
  RunTags run_tags;
};

struct EpochRecord {
  int64_t epoch = 0;
  double loss = 0, train_acc = 0, valid_acc = 0, valid_loss = 0, test_acc = 0;
  double epoch_ms = 0;  // one training step: forward + backward + optimizer
};

struct TrainResult {
  std::vector<EpochRecord> history;
  int64_t best_epoch = 0;  // the selected epoch (TrainerOptions::selection)
  double best_valid_acc = 0, test_acc = 0, train_acc = 0;  // at best_epoch
  double epoch_ms_median = 0;
  double total_seconds = 0;
  bool stopped_early = false;
};

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

// Throws std::invalid_argument "cannot write '<path>': <reason>" unless a file at
// `path` can be opened for writing. An existing file is left as it is (opened for
// appending, nothing written); a file created by the check is removed again.
void check_writable_file(const std::string& path);

// Writes the history as CSV, JSON (NaN and infinities as null) and an SVG plot
// (loss and accuracies per epoch; `title`, e.g. the dataset name, is escaped).
// Each throws std::runtime_error naming the path when the file cannot be written.
void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& history);
void write_metrics_json(const std::string& path, const TrainResult& result);
void write_training_curves_svg(const std::string& path, const std::vector<EpochRecord>& history,
                               const std::string& title);

}  // namespace edgewise::gnn
