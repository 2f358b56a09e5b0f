// TrainOptions' vocabulary: the parsers, the learning-rate schedule and Metrics.
#include "edgewise/gnn/train/train_options.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "adam") return OptimizerKind::Adam;
  if (name == "adamw") return OptimizerKind::AdamW;
  if (name == "sgd") return OptimizerKind::Sgd;
  detail::throw_invalid_argument("optimizer: unknown '", name, "' (expected adam, adamw or sgd)");
}

ModelSelection parse_model_selection(const std::string& name) {
  if (name == "best-valid") return ModelSelection::BestValidation;
  if (name == "last") return ModelSelection::LastEpoch;
  detail::throw_invalid_argument("select: unknown '", name, "' (expected best-valid or last)");
}

LrSchedule parse_lr_schedule(const std::string& name) {
  if (name == "constant") return LrSchedule::Constant;
  if (name == "cosine") return LrSchedule::Cosine;
  detail::throw_invalid_argument("lr_schedule: unknown '", name, "' (expected constant or cosine)");
}

const char* to_string(LrSchedule schedule) { return schedule == LrSchedule::Cosine ? "cosine" : "constant"; }

float scheduled_lr(LrSchedule schedule, float lr, int64_t epoch, int64_t epochs) {
  if (schedule == LrSchedule::Constant || epochs < 1) return lr;
  const double progress = static_cast<double>(epoch - 1) / static_cast<double>(epochs);
  return static_cast<float>(static_cast<double>(lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress)));
}

void Metrics::set(std::string_view name, double value) {
  for (auto& [n, v] : items_) {
    if (n == name) {
      v = value;
      return;
    }
  }
  items_.emplace_back(std::string(name), value);
}

double Metrics::get(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return v;
  return std::numeric_limits<double>::quiet_NaN();
}

bool Metrics::has(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return true;
  return false;
}

std::vector<std::string> metric_names(const std::vector<EpochRecord>& history) {
  std::vector<std::string> names;
  for (const EpochRecord& r : history)
    for (const auto& [name, value] : r.metrics.items())
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  return names;
}

}  // namespace edgewise::gnn
