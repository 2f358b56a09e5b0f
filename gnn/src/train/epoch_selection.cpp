// EpochSelector: the best evaluated epoch by a SelectionKey, and the patience count.
#include "edgewise/gnn/train/epoch_selection.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace edgewise::gnn::train_detail {

namespace {

void report(int64_t epoch, const Metrics& metrics, TrainResult& result) {
  result.best_epoch = epoch;
  result.best = metrics;
  const auto or_zero = [&](const char* name) {
    const double v = metrics.get(name);
    return std::isnan(v) ? 0.0 : v;
  };
  result.best_valid_acc = or_zero("valid_acc");
  result.test_acc = or_zero("test_acc");
  result.train_acc = or_zero("train_acc");
}

// Whether a beats b by this direction (NaN never beats anything; anything beats NaN).
bool beats(double a, double b, bool higher_is_better) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return higher_is_better ? a > b : a < b;
}

}  // namespace

bool EpochSelector::better(const Metrics& candidate) const {
  if (best_.best_epoch == 0) return true;
  const double a = candidate.get(key_.metric), b = best_.best.get(key_.metric);
  if (beats(a, b, key_.higher_is_better)) return true;
  if (a != b || key_.tie_metric.empty()) return false;
  return beats(candidate.get(key_.tie_metric), best_.best.get(key_.tie_metric), key_.tie_higher_is_better);
}

int64_t EpochSelector::observe(const EpochRecord& rec, TrainResult& result) {
  observed_ = true;
  last_ = rec;
  if (!better(rec.metrics)) return ++best_.since_best;
  best_ = {rec.epoch, rec.metrics, 0};
  report(best_.best_epoch, best_.best, result);
  return 0;
}

void EpochSelector::restore(const SelectionState& state, const EpochRecord* last, TrainResult& result) {
  best_ = state;
  observed_ = last != nullptr;
  if (last) last_ = *last;
  if (best_.best_epoch > 0) report(best_.best_epoch, best_.best, result);
}

void EpochSelector::finish(TrainResult& result) const {
  if (selection_ == ModelSelection::LastEpoch && observed_) report(last_.epoch, last_.metrics, result);
  std::vector<double> times;
  for (const EpochRecord& r : result.history) times.push_back(r.epoch_ms);
  std::sort(times.begin(), times.end());
  result.epoch_ms_median = times.empty() ? 0.0 : times[times.size() / 2];
}

}  // namespace edgewise::gnn::train_detail
