// Trainer checkpoints: everything Trainer::fit needs to continue a run exactly —
// model parameters, optimizer state, the dropout generator, the history and the
// model-selection state — as one .npz archive (keys in checkpoint.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgewise/gnn/optim.hpp"
#include "edgewise/gnn/random.hpp"
#include "edgewise/gnn/state_dict.hpp"
#include "edgewise/gnn/trainer.hpp"
#include "train/epoch_selection.hpp"

namespace edgewise::gnn::train_detail {

struct TrainerCheckpoint {
  int64_t epoch = 0;  // the last completed epoch
  bool stopped_early = false;
  double elapsed_seconds = 0;
  StateDict model;
  OptimizerState optimizer;
  Generator::State generator;
  std::vector<EpochRecord> history;
  SelectionState selection;
};

// Atomic (write_npz); std::runtime_error naming `path` on an I/O failure.
void write_trainer_checkpoint(const std::string& path, const TrainerCheckpoint& checkpoint);
// DataFileError naming `path` and the key when the file is no Trainer checkpoint
// (a missing or unexpected key, a wrong dtype or shape).
TrainerCheckpoint read_trainer_checkpoint(const std::string& path);

// The state of a run after `epoch`, written to options.checkpoint_path.
void save_checkpoint(const TrainerOptions& options, int64_t epoch, const TrainResult& result,
                     const NodeClassifier& model, const Optimizer& optimizer, const Generator& generator,
                     const EpochSelector& selector, double elapsed_seconds);

// Loads options.resume_path into the model, optimizer, generator, selector and result
// (history, best-validation metrics, stopped_early) after checking all of it, so a
// bad checkpoint changes nothing. Returns the first epoch still to run (past
// options.epochs when the checkpointed run had stopped early); `elapsed_seconds`
// gets the checkpointed run's training time.
int64_t resume_from_checkpoint(const TrainerOptions& options, NodeClassifier& model, Optimizer& optimizer,
                               Generator& generator, EpochSelector& selector, TrainResult& result,
                               double& elapsed_seconds);

}  // namespace edgewise::gnn::train_detail
