// What Trainer and MiniBatchTrainer share after each evaluation: scoring the
// full-batch logits, and keeping the metrics of the epoch TrainerOptions::selection
// (or MiniBatchTrainerOptions::selection) reports.
#pragma once

#include <cstdint>

#include "edgewise/gnn/trainer.hpp"

namespace edgewise::gnn::train_detail {

// Full-batch scores [N, K] -> rec's train / valid / test accuracy and validation loss.
void score_epoch(const Tensor& scores, const TrainData& data, EpochRecord& rec);

class EpochSelector {
 public:
  explicit EpochSelector(ModelSelection selection) : selection_(selection) {}
  // An evaluated epoch: updates result's best-validation metrics; returns how many
  // evaluations have passed since the best one (the patience count).
  int64_t observe(const EpochRecord& rec, TrainResult& result);
  // After the last epoch: the selected epoch's metrics and the median epoch time.
  void finish(TrainResult& result) const;

 private:
  ModelSelection selection_;
  double best_valid_ = -1, best_valid_loss_ = 1e300;
  int64_t since_best_ = 0;
  bool observed_ = false;
  EpochRecord last_;
};

}  // namespace edgewise::gnn::train_detail
