// What Trainer and MiniBatchTrainer share around each evaluation: the full-batch
// scores, scoring them, and keeping the metrics of the epoch TrainerOptions::selection
// (or MiniBatchTrainerOptions::selection) reports.
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::gnn::train_detail {

// Full-batch scores [N, K] -> rec's train / valid / test accuracy and validation loss.
void score_epoch(const Tensor& scores, const TrainData& data, EpochRecord& rec);

// The model's full-batch scores [N, K] in eval mode, nothing recorded for backward;
// the model is left in training mode.
template <class Model>
Tensor eval_scores(Model& model, const TrainData& data, Generator& generator) {
  NoGradGuard guard;
  model.eval();
  Tensor scores = model.forward(data.graph, data.features, generator).value();
  model.train();
  return scores;
}

// What EpochSelector has learnt so far (for checkpoints): the best evaluated
// epoch by validation accuracy and the patience count.
struct SelectionState {
  int64_t best_epoch = 0;
  double best_valid_acc = -1, best_valid_loss = 1e300, best_test_acc = 0, best_train_acc = 0;
  int64_t since_best = 0;
};

class EpochSelector {
 public:
  explicit EpochSelector(ModelSelection selection) : selection_(selection) {}
  SelectionState state() const { return best_; }
  int64_t last_epoch() const { return observed_ ? last_.epoch : 0; }  // the last evaluated epoch (0: none)
  // Continues from `state`, `last` being the last evaluated epoch (null: none), for a
  // checkpoint resume; sets result's best-validation metrics as observe() had.
  void restore(const SelectionState& state, const EpochRecord* last, TrainResult& result);
  // An evaluated epoch: updates result's best-validation metrics; returns how many
  // evaluations have passed since the best one (the patience count).
  int64_t observe(const EpochRecord& rec, TrainResult& result);
  // After the last epoch: the selected epoch's metrics and the median epoch time.
  void finish(TrainResult& result) const;

 private:
  ModelSelection selection_;
  SelectionState best_;
  bool observed_ = false;
  EpochRecord last_;
};

}  // namespace edgewise::gnn::train_detail
