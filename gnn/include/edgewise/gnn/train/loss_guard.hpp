// The non-finite training-loss guard every task's train step uses
// (TrainOptions::nonfinite_loss).
#pragma once

#include <cstdint>

#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn::train_detail {

class LossGuard {
 public:
  LossGuard(const char* trainer, NonFiniteLoss policy) : trainer_(trainer), policy_(policy) {}
  // When `loss` is NaN or infinite: throws NonFiniteLossError naming the epoch (and
  // the batch when batch >= 0) under Error; prints one warning per guard under Warn.
  void check(double loss, int64_t epoch, int64_t batch = -1);

 private:
  const char* trainer_;
  NonFiniteLoss policy_;
  bool warned_ = false;
};

}  // namespace edgewise::gnn::train_detail
