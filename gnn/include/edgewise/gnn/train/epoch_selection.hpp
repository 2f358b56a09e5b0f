// Model selection inside the epoch loop: which evaluated epoch the result reports
// (TrainOptions::selection by an EpochLoop's SelectionKey) and the patience count.
#pragma once

#include <cstdint>
#include <string>

#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn {

// Under ModelSelection::BestValidation, a later evaluation replaces the best one when
// its `metric` is better (higher, or lower when !higher_is_better); on an equal value
// `tie_metric` decides the same way (empty: the earlier epoch stays). NaN is never better.
struct SelectionKey {
  std::string metric = "valid_acc";
  bool higher_is_better = true;
  std::string tie_metric;
  bool tie_higher_is_better = false;
};

namespace train_detail {

// What EpochSelector has learnt so far (for checkpoints): the best evaluated epoch,
// its metrics and the patience count.
struct SelectionState {
  int64_t best_epoch = 0;
  Metrics best;
  int64_t since_best = 0;
};

class EpochSelector {
 public:
  EpochSelector(ModelSelection selection, SelectionKey key) : selection_(selection), key_(std::move(key)) {}
  SelectionState state() const { return best_; }
  int64_t last_epoch() const { return observed_ ? last_.epoch : 0; }  // the last evaluated epoch (0: none)
  // Continues from `state`, `last` being the last evaluated epoch (null: none), for a
  // checkpoint resume; sets result's selected metrics as observe() had.
  void restore(const SelectionState& state, const EpochRecord* last, TrainResult& result);
  // An evaluated epoch: updates result's selected metrics; returns how many
  // evaluations have passed since the best one (the patience count).
  int64_t observe(const EpochRecord& rec, TrainResult& result);
  // After the last epoch: the selected epoch's metrics and the median epoch time.
  void finish(TrainResult& result) const;

 private:
  bool better(const Metrics& candidate) const;
  ModelSelection selection_;
  SelectionKey key_;
  SelectionState best_;
  bool observed_ = false;
  EpochRecord last_;
};

}  // namespace train_detail
}  // namespace edgewise::gnn
