// The one epoch loop every training task runs (node, minibatch, link, graph, and the
// distributed node task): a task supplies its train step and its evaluation; the loop
// gives it the learning-rate schedule, evaluation every eval_every epochs, model
// selection by a SelectionKey, patience, progress lines with throughput and ETA,
// on_epoch, checkpoints and bitwise resume, metric files and the plot — all from one
// TrainOptions (train_options.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/train/epoch_selection.hpp"
#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn {

// A task's part of training.
struct EpochLoop {
  // One epoch of training (every batch of it): sets rec.loss and rec.epoch_ms; rec.epoch
  // and rec.lr are set (the optimizer already runs at rec.lr).
  std::function<void(EpochRecord& rec)> train_step;
  // The evaluation after an epoch (every eval_every epochs and after the last): rec.metrics.
  std::function<void(EpochRecord& rec)> evaluate;
  // Optional: what the progress line shows after "<ms> ms/epoch" (throughput, ...).
  std::function<std::string(const EpochRecord& rec)> progress_tail;
  SelectionKey selection;
  std::string name;     // the task and data, for the progress line and the plot's title
  bool report = true;   // progress lines and metric files (false on all but rank 0 of a distributed run)
};

// What a checkpoint saves and a resume restores besides the loop's own state.
struct TrainingState {
  Module& model;
  Optimizer& optimizer;
  Generator& generator;
  std::unique_ptr<SeedSampler>* seeds = nullptr;  // a loss-prioritised seed sampler (MiniBatchTrainer)
};

// Checks what every task checks before any work (epochs >= 1, eval_every >= 1,
// patience >= 0, the checkpoint options, the output files writable), naming `task`.
void check_train_options(const char* task, const TrainOptions& options);

// options.optimizer over `groups` at options.lr (and momentum for SGD).
std::unique_ptr<Optimizer> make_optimizer(const std::vector<ParamGroup>& groups, const TrainOptions& options);

// Runs epochs 1 .. options.epochs — after resuming from options.resume_path, the rest —
// into `result`: the history, the selected epoch and its metrics, the median epoch
// time, the total time (resumed runs included) and whether it stopped early.
void run_training(const TrainOptions& options, const EpochLoop& loop, const TrainingState& state,
                  TrainResult& result);

namespace train_detail {
using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b);
std::string format_seconds(double seconds);  // "12.3 s", "4m05s"
}  // namespace train_detail

}  // namespace edgewise::gnn
