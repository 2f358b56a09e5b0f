// The epoch bookkeeping Trainer::fit and dist::fit_distributed share: the optimizer
// TrainerOptions names, the output-path checks, and the loop — one record per epoch,
// model selection, progress lines, periodic checkpoints, the on_epoch callback,
// early stopping, the selected epoch's metrics, total time and the metric files.
// What an epoch computes (one process, or reduced over ranks) is the caller's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "edgewise/gnn/train/epoch_selection.hpp"

namespace edgewise::gnn::train_detail {

using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b);
std::string format_seconds(double seconds);  // "12.3 s", "4m05s"

// options.optimizer over `groups` with options.lr (and momentum for SGD).
std::unique_ptr<Optimizer> make_optimizer(const std::vector<ParamGroup>& groups, const TrainerOptions& options);

// check_writable_file on every output path options names, before any work.
void check_output_paths(const TrainerOptions& options);

struct EpochLoop {
  // One training step of rec.epoch: sets rec.loss (checked) and rec.epoch_ms.
  std::function<void(EpochRecord& rec)> train_step;
  // The evaluation after it: rec's accuracies and validation loss.
  std::function<void(EpochRecord& rec)> evaluate;
  // The progress line after "<ms> ms/epoch" (throughput, ETA, ...).
  std::function<std::string(const EpochRecord& rec, double eta_seconds)> progress_tail;
  // Saves a checkpoint after `epoch` with the run's training time so far; null: no checkpoints.
  std::function<void(int64_t epoch, double elapsed_seconds)> checkpoint;
  int64_t first_epoch = 1;     // > 1 after a resume (result then holds the earlier epochs)
  double resumed_seconds = 0;  // training time before the resumed checkpoint
  Clock::time_point start = Clock::now();
  bool report = true;          // progress lines and metric files (only rank 0 of a distributed run)
  std::string dataset_name;    // the plot's title
};

// Epochs loop.first_epoch .. options.epochs into `result`, selected by `selector`.
void run_epochs(const TrainerOptions& options, const EpochLoop& loop, EpochSelector& selector, TrainResult& result);

}  // namespace edgewise::gnn::train_detail
