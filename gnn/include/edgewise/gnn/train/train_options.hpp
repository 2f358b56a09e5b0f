// What every training task shares: one TrainOptions (optimizer, learning rate and its
// schedule, epochs, seed, evaluation cadence, patience, selection, logging, output
// files, checkpoints), the per-epoch record with named metrics, and the result. The
// node, minibatch, link and graph tasks embed TrainOptions and run the one epoch loop
// (epoch_loop.hpp); each supplies only its train step and its evaluation.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edgewise::gnn {

enum class OptimizerKind { Adam, AdamW, Sgd };
// "adam", "adamw" or "sgd"; std::invalid_argument otherwise.
OptimizerKind parse_optimizer(const std::string& name);

// Which epoch's model the reported metrics come from.
enum class ModelSelection {
  BestValidation,  // the best validation metric of the task (node: accuracy, ties to the
                   // lower validation loss, as PyG's examples; link: AUC), earliest on ties
  LastEpoch,       // the model after the last epoch (Kipf & Welling's 200-epoch protocol); better
                   // when the validation set is too small for selection to help
};
// "best-valid" or "last"; throws std::invalid_argument otherwise.
ModelSelection parse_model_selection(const std::string& name);

// What training does when a step's loss is NaN or infinite (the run has diverged: a
// learning rate far too high, or bad input).
enum class NonFiniteLoss {
  Error,  // throw NonFiniteLossError naming the epoch, before that epoch's update
  Warn,   // print one warning on stderr and go on
};
// "error" or "warn"; std::invalid_argument otherwise.
NonFiniteLoss parse_nonfinite_loss(const std::string& name);

// Thrown under NonFiniteLoss::Error, by every task.
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

// The learning rate over the epochs. Constant: lr throughout. Cosine: lr at epoch 1,
// decaying along half a cosine to 0 after the last epoch (SGDR without restarts,
// torch's CosineAnnealingLR with T_max = epochs, eta_min = 0):
//   lr_e = lr * (1 + cos(pi * (e - 1) / epochs)) / 2.
// A pure function of the epoch, so a resumed run follows the same schedule.
enum class LrSchedule { Constant, Cosine };
// "constant" or "cosine"; std::invalid_argument otherwise.
LrSchedule parse_lr_schedule(const std::string& name);
const char* to_string(LrSchedule schedule);
float scheduled_lr(LrSchedule schedule, float lr, int64_t epoch, int64_t epochs);

// (key, value) pairs identifying a run, e.g. {"--dataset", "cora"}.
using RunTags = std::vector<std::pair<std::string, std::string>>;

// Named values of one evaluation ("train_acc", "valid_acc", "valid_loss", "test_acc"
// for node classification; "valid_auc", "test_auc", "test_hits@50" for links), in the
// order they were first set.
class Metrics {
 public:
  void set(std::string_view name, double value);
  // The value, NaN when the metric is absent.
  double get(std::string_view name) const;
  bool has(std::string_view name) const;
  bool empty() const noexcept { return items_.empty(); }
  const std::vector<std::pair<std::string, double>>& items() const noexcept { return items_; }

 private:
  std::vector<std::pair<std::string, double>> items_;
};

struct EpochRecord {
  int64_t epoch = 0;
  double loss = 0;        // the training loss (mean over the epoch's batches)
  double epoch_ms = 0;    // training time of the epoch (not its evaluation)
  double lr = 0;          // the learning rate the epoch trained with
  bool evaluated = false; // whether the epoch was evaluated (TrainOptions::eval_every)
  Metrics metrics;        // empty unless evaluated
  double metric(std::string_view name) const { return metrics.get(name); }
};

// Every metric name any record of `history` has, in first-seen order.
std::vector<std::string> metric_names(const std::vector<EpochRecord>& history);

struct TrainResult {
  std::vector<EpochRecord> history;
  int64_t best_epoch = 0;  // the selected epoch (TrainOptions::selection)
  Metrics best;            // its metrics
  // best's train / valid / test accuracy where the task reports them (node and graph
  // classification), else 0.
  double best_valid_acc = 0, test_acc = 0, train_acc = 0;
  double epoch_ms_median = 0;
  double total_seconds = 0;
  bool stopped_early = false;
};

struct TrainOptions {
  int64_t epochs = 200;
  float lr = 0.01f;
  LrSchedule lr_schedule = LrSchedule::Constant;
  float weight_decay = 5e-4f;
  OptimizerKind optimizer = OptimizerKind::Adam;
  float momentum = 0.9f;      // SGD
  int64_t eval_every = 1;     // evaluate every this many epochs (and after the last)
  int64_t patience = 0;       // stop after this many evaluations without a better one (0: never)
  ModelSelection selection = ModelSelection::BestValidation;
  uint64_t seed = 0;          // the run's randomness: initialisation is the caller's, dropout and sampling here
  int64_t log_every = 10;     // progress line every this many epochs (0: silent)
  NonFiniteLoss nonfinite_loss = NonFiniteLoss::Error;
  // Output files, checked writable (check_writable_file) before the first epoch and
  // written at the end when set.
  std::string metrics_csv;    // per-epoch log
  std::string metrics_json;
  std::string plot_svg;       // training curves
  // Called after every epoch (after its progress line); returning false stops training
  // (TrainResult::stopped_early) as an interrupt: the final checkpoint is written, and
  // resuming it continues the run (early stopping by patience ends it for good).
  // Exceptions propagate out of the task.
  std::function<bool(const EpochRecord&)> on_epoch;
  // Checkpoints (.npz, written atomically): every checkpoint_every epochs (0: only at
  // the end) and after the last epoch, when checkpoint_path is set. resume_path
  // continues a run from its checkpoint up to `epochs` in total; with the same other
  // options the result is bitwise that of the uninterrupted run. A checkpoint holds
  // "model.<parameter name>", "optim.*" (kind, per-parameter state), "rng.*" (the
  // Generator), "trainer.*" (epoch, stopped_early, elapsed seconds), "history.*" (the
  // per-epoch records, one array per metric) and "selection.*" (best epoch, its
  // metrics, patience count); the full list is in src/train/checkpoint.cpp. A
  // checkpoint that does not fit the model or optimizer is refused, naming the key,
  // before anything changes.
  std::string checkpoint_path;
  int64_t checkpoint_every = 0;
  std::string resume_path;
  // What the run was made from and must not change across a resume (the dataset,
  // the options that change results): written into checkpoints as "run.<key>";
  // resuming where any differs (or one is missing) is refused, naming the key and
  // both values. Parameters or optimizer state that are not finite are refused too.
  RunTags run_tags;
};

// Throws std::invalid_argument "cannot write '<path>': <reason>" unless a file at
// `path` can be opened for writing. An existing file is left as it is (opened for
// appending, nothing written); a file created by the check is removed again.
void check_writable_file(const std::string& path);

// Writes the history as CSV (epoch, loss, every metric any epoch has, lr, epoch_ms;
// an unevaluated epoch leaves its metrics empty), JSON (NaN and infinities as null)
// and an SVG plot (the losses in one panel, the other metrics in the second; `title`,
// e.g. the dataset name, is escaped). Each throws std::runtime_error naming the path
// when the file cannot be written.
void write_metrics_csv(const std::string& path, const std::vector<EpochRecord>& history);
void write_metrics_json(const std::string& path, const TrainResult& result);
void write_training_curves_svg(const std::string& path, const std::vector<EpochRecord>& history,
                               const std::string& title);

}  // namespace edgewise::gnn
