// Optimizer state for checkpoints: export as host copies, check, and restore.
#include <algorithm>
#include <charconv>
#include <system_error>

#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// "<i>.<field>" -> i and field; false for any other form.
bool split_key(const std::string& key, size_t& index, std::string& field) {
  const size_t dot = key.find('.');
  if (dot == std::string::npos || dot == 0) return false;
  const char* first = key.data();
  const auto [end, ec] = std::from_chars(first, first + dot, index);
  if (ec != std::errc() || end != first + dot) return false;
  field = key.substr(dot + 1);
  return true;
}

std::string key_of(size_t index, const std::string& field) { return std::to_string(index) + "." + field; }

// Every key is "<i>.<field>" with i a parameter position and a known field, tensors
// have their parameter's shape, counters are >= 1, and a parameter with any entry
// has them all.
void check_layout(const OptimizerState& state, const std::string& kind, const std::vector<Variable>& params,
                  const std::vector<std::string>& tensor_fields, const std::vector<std::string>& counter_fields) {
  EW_REQUIRE(state.kind == kind, "optimizer state: kind '", state.kind, "' cannot be loaded into a ", kind,
             " optimizer");
  std::vector<bool> has_state(params.size(), false);
  auto locate = [&](const std::string& key, const std::vector<std::string>& fields) {
    size_t index = 0;
    std::string field;
    const bool known = split_key(key, index, field) && std::find(fields.begin(), fields.end(), field) != fields.end();
    EW_REQUIRE(known, "optimizer state: unexpected key '", key, "' for a ", kind, " optimizer");
    EW_REQUIRE(index < params.size(), "optimizer state: key '", key, "' refers to parameter ", index, " but the ",
               kind, " optimizer has ", params.size(), " parameters");
    has_state[index] = true;
    return index;
  };
  for (const auto& [key, value] : state.tensors) {
    const Variable& p = params[locate(key, tensor_fields)];
    EW_REQUIRE(value.rows() == p.rows() && value.cols() == p.cols(), "optimizer state: key '", key, "' has shape ",
               value.shape_str(), " but its parameter ('", p.name(), "') has shape ", p.value().shape_str());
  }
  for (const auto& [key, value] : state.counters) {
    locate(key, counter_fields);
    EW_REQUIRE(value >= 1, "optimizer state: key '", key, "' (", value, ") must be >= 1");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!has_state[i]) continue;
    for (const std::string& field : tensor_fields) {
      EW_REQUIRE(state.tensors.contains(key_of(i, field)), "optimizer state: missing key '", key_of(i, field), "'");
    }
    for (const std::string& field : counter_fields) {
      EW_REQUIRE(state.counters.contains(key_of(i, field)), "optimizer state: missing key '", key_of(i, field), "'");
    }
  }
}

const std::vector<std::string> kAdamTensors{"exp_avg", "exp_avg_sq"};
const std::vector<std::string> kAdamCounters{"step"};
const std::vector<std::string> kSgdTensors{"momentum_buffer"};

}  // namespace

std::vector<Variable> Optimizer::all_params() const {
  std::vector<Variable> params;
  for (const ParamGroup& g : groups_) params.insert(params.end(), g.params.begin(), g.params.end());
  return params;
}

void Optimizer::load_state_dict(const OptimizerState& state) {
  check_state_dict(state);
  apply_state_dict(state);
}

OptimizerState Adam::state_dict() const {
  OptimizerState out;
  out.kind = decoupled_ ? "adamw" : "adam";
  const std::vector<Variable> params = all_params();
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = state_.find(params[i].impl());
    if (it == state_.end() || !it->second.m.defined()) continue;
    out.tensors.insert(key_of(i, "exp_avg"), it->second.m.to(Device::cpu()));
    out.tensors.insert(key_of(i, "exp_avg_sq"), it->second.v.to(Device::cpu()));
    out.counters[key_of(i, "step")] = it->second.step;
  }
  return out;
}

void Adam::check_state_dict(const OptimizerState& state) const {
  check_layout(state, decoupled_ ? "adamw" : "adam", all_params(), kAdamTensors, kAdamCounters);
}

void Adam::apply_state_dict(const OptimizerState& state) {
  state_.clear();
  const std::vector<Variable> params = all_params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor* m = state.tensors.find(key_of(i, "exp_avg"));
    if (m == nullptr) continue;
    State& s = state_[params[i].impl()];
    s.m = m->to(params[i].device());
    s.v = state.tensors.at(key_of(i, "exp_avg_sq")).to(params[i].device());
    s.step = state.counters.at(key_of(i, "step"));
  }
}

OptimizerState Sgd::state_dict() const {
  OptimizerState out;
  out.kind = "sgd";
  const std::vector<Variable> params = all_params();
  for (size_t i = 0; i < params.size(); ++i) {
    auto it = momentum_.find(params[i].impl());
    if (it == momentum_.end() || !it->second.defined()) continue;
    out.tensors.insert(key_of(i, "momentum_buffer"), it->second.to(Device::cpu()));
  }
  return out;
}

void Sgd::check_state_dict(const OptimizerState& state) const {
  check_layout(state, "sgd", all_params(), kSgdTensors, {});
}

void Sgd::apply_state_dict(const OptimizerState& state) {
  momentum_.clear();
  const std::vector<Variable> params = all_params();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor* buf = state.tensors.find(key_of(i, "momentum_buffer"));
    if (buf != nullptr) momentum_[params[i].impl()] = buf->to(params[i].device());
  }
}

}  // namespace edgewise::gnn
