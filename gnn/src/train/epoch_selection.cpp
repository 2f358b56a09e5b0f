#include "edgewise/gnn/train/epoch_selection.hpp"

#include <algorithm>
#include <vector>

#include "edgewise/gnn/tensor/ops.hpp"

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

namespace {
void report_best(const SelectionState& best, TrainResult& result) {
  result.best_epoch = best.best_epoch;
  result.best_valid_acc = best.best_valid_acc;
  result.test_acc = best.best_test_acc;
  result.train_acc = best.best_train_acc;
}
}  // namespace

int64_t EpochSelector::observe(const EpochRecord& rec, TrainResult& result) {
  observed_ = true;
  last_ = rec;
  const bool better = rec.valid_acc > best_.best_valid_acc ||
                      (rec.valid_acc == best_.best_valid_acc && rec.valid_loss < best_.best_valid_loss);
  if (!better) return ++best_.since_best;
  best_ = {rec.epoch, rec.valid_acc, rec.valid_loss, rec.test_acc, rec.train_acc, 0};
  report_best(best_, result);
  return 0;
}

void EpochSelector::restore(const SelectionState& state, const EpochRecord* last, TrainResult& result) {
  best_ = state;
  observed_ = last != nullptr;
  if (last) last_ = *last;
  if (best_.best_epoch > 0) report_best(best_, result);
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
