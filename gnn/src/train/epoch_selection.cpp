#include "train/epoch_selection.hpp"

#include <algorithm>
#include <vector>

#include "edgewise/gnn/ops.hpp"

namespace edgewise::gnn::train_detail {

void score_epoch(const Tensor& scores, const TrainData& data, EpochRecord& rec) {
  rec.train_acc = ops::accuracy(scores, data.labels, data.train_idx);
  rec.valid_acc = data.valid_idx.numel() ? ops::accuracy(scores, data.labels, data.valid_idx) : 0.0;
  rec.test_acc = data.test_idx.numel() ? ops::accuracy(scores, data.labels, data.test_idx) : 0.0;
  if (data.valid_idx.numel()) {
    Tensor logp(scores.rows(), scores.cols(), scores.device());
    ops::log_softmax_rows(scores, logp);
    rec.valid_loss = ops::nll_loss(logp, data.labels, data.valid_idx, nullptr);
  }
}

int64_t EpochSelector::observe(const EpochRecord& rec, TrainResult& result) {
  observed_ = true;
  last_ = rec;
  const bool better = rec.valid_acc > best_valid_ || (rec.valid_acc == best_valid_ && rec.valid_loss < best_valid_loss_);
  if (!better) return ++since_best_;
  best_valid_ = rec.valid_acc;
  best_valid_loss_ = rec.valid_loss;
  result.best_epoch = rec.epoch;
  result.best_valid_acc = rec.valid_acc;
  result.test_acc = rec.test_acc;
  result.train_acc = rec.train_acc;
  return since_best_ = 0;
}

void EpochSelector::finish(TrainResult& result) const {
  if (selection_ == ModelSelection::LastEpoch && observed_) {
    result.best_epoch = last_.epoch;
    result.best_valid_acc = last_.valid_acc;
    result.test_acc = last_.test_acc;
    result.train_acc = last_.train_acc;
  }
  std::vector<double> times;
  for (const EpochRecord& r : result.history) times.push_back(r.epoch_ms);
  std::sort(times.begin(), times.end());
  result.epoch_ms_median = times.empty() ? 0.0 : times[times.size() / 2];
}

}  // namespace edgewise::gnn::train_detail
