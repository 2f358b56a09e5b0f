// Training checkpoints: everything the epoch loop needs to continue a run exactly —
// model parameters, optimizer state, the generator, the history and the
// model-selection state — as one .npz archive (keys in checkpoint.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/nn/state_dict.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"

namespace edgewise::gnn::train_detail {

struct TrainerCheckpoint {
  int64_t epoch = 0;  // the last completed epoch
  bool stopped_early = false;  // finished by early stopping (patience)
  double elapsed_seconds = 0;
  StateDict model;
  OptimizerState optimizer;
  Generator::State generator;
  std::vector<EpochRecord> history;
  SelectionState selection;
  int64_t last_evaluated_epoch = 0;    // 0: none (evaluations every eval_every epochs)
  std::vector<float> seed_priorities;  // a loss-prioritised SeedSampler's; empty otherwise
  RunTags run_tags;                    // what the run was made from (TrainOptions::run_tags)
};

// Atomic (write_npz); std::runtime_error naming `path` on an I/O failure.
void write_trainer_checkpoint(const std::string& path, const TrainerCheckpoint& checkpoint);
// DataFileError naming `path` and the key when the file is no training checkpoint
// (a missing or unexpected key, a wrong dtype or shape, a parameter or optimizer
// value that is not finite).
TrainerCheckpoint read_trainer_checkpoint(const std::string& path);

// Fails fast (std::invalid_argument naming `path`) when checkpoints could not be
// written there — its directory is missing or not writable, or it is a directory —
// so that a run does not train for hours before finding out.
void check_checkpoint_path(const std::string& path);

// The checkpoint options of a task (`op` names it in the message): every >= 0,
// every > 0 needs a path, and a path must be writable (check_checkpoint_path).
void check_checkpoint_options(const char* op, int64_t every, const std::string& path);

// Refuses (std::invalid_argument naming `path`, the key and both values) a resume
// whose run tags differ from those saved: a key missing on either side, or another value.
void check_run_tags(const std::string& path, const RunTags& saved, const RunTags& now);

// The parts of a running loop a checkpoint saves and restores.
struct RunState {
  const TrainingState& training;
  EpochSelector& selector;
  TrainResult& result;
  const RunTags& run_tags;
};

// The state of `run` after `epoch`, to `path`. `finished`: early stopping ended the
// run (a resume adds no epoch); a run stopped by on_epoch (an interrupt) is not
// finished, and a resume continues it.
void save_checkpoint(const std::string& path, int64_t epoch, const RunState& run, double elapsed_seconds,
                     bool finished);

// Loads the checkpoint `path` into `run` (model, optimizer, generator, selector,
// seed sampler; result's history, selected metrics and stopped_early) after checking
// all of it, so a bad checkpoint changes nothing. Returns the first epoch still to
// run (past `epochs` when the checkpointed run had stopped early); `elapsed_seconds`
// gets the checkpointed run's training time.
int64_t resume_from_checkpoint(const std::string& path, int64_t epochs, const RunState& run,
                               double& elapsed_seconds);

}  // namespace edgewise::gnn::train_detail
