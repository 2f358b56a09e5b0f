// Module helpers and the Linear layer.
#include "edgewise/gnn/module.hpp"

#include <algorithm>

#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/init.hpp"
#include "edgewise/gnn/linear.hpp"
#include "edgewise/gnn/stream.hpp"

namespace edgewise::gnn {

Variable parameter(Tensor value, std::string name) { return Variable(std::move(value), true, std::move(name)); }

void Module::to(Device device) {
  require_available(device, "Module::to");  // before any parameter moves: none is left half-moved
  for (Variable p : parameters()) {
    if (p.device() != device) p.mutable_value() = p.value().to(device);
    p.zero_grad();
  }
}

NamedParameters Module::named_parameters() const {
  NamedParameters named;
  for (const Variable& p : parameters()) named.emplace_back(std::to_string(named.size()), p);
  return named;
}

StateDict Module::state_dict() const {
  StateDict state;
  for (const auto& [name, p] : named_parameters()) state.insert(name, p.value().to(Device::cpu()));
  return state;
}

void Module::check_state_dict(const StateDict& state) const {
  const NamedParameters named = named_parameters();
  for (const auto& [name, p] : named) {
    const Tensor* t = state.find(name);
    EW_REQUIRE(t != nullptr, "load_state_dict: missing key '", name, "' (parameter of shape ", p.value().shape_str(),
               ")");
    EW_REQUIRE(t->rows() == p.rows() && t->cols() == p.cols(), "load_state_dict: key '", name, "' has shape ",
               t->shape_str(), " but the parameter has shape ", p.value().shape_str());
  }
  for (const auto& [key, value] : state) {
    const std::string& wanted = key;  // clang 14 cannot capture structured bindings
    const bool known =
        std::any_of(named.begin(), named.end(), [&](const auto& entry) { return entry.first == wanted; });
    EW_REQUIRE(known, "load_state_dict: unexpected key '", key, "' (shape ", value.shape_str(),
               ") names no parameter of ", describe());
  }
}

void Module::load_state_dict(const StateDict& state) {
  check_state_dict(state);
  for (auto& [name, p] : named_parameters()) {
    const Tensor& t = state.at(name);
    copy_bytes(p.mutable_value().data(), p.device(), t.data(), t.device(), t.bytes(),
               engine_stream(p.device(), t.device()));
  }
}

void append_named_parameters(NamedParameters& out, const std::string& prefix, const Module& module) {
  for (auto& [name, p] : module.named_parameters()) out.emplace_back(prefix + "." + name, p);
}

std::vector<Variable> parameter_values(const NamedParameters& named) {
  std::vector<Variable> ps;
  ps.reserve(named.size());
  for (const auto& entry : named) ps.push_back(entry.second);
  return ps;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Variable& p : parameters()) n += p.value().numel();
  return n;
}

Linear::Linear(int64_t in_features, int64_t out_features, Generator& generator, bool bias, WeightInit init,
               Device device) {
  Tensor w = init == WeightInit::Glorot ? init::glorot_uniform(in_features, out_features, generator, device)
                                        : init::linear_default(in_features, in_features, out_features, generator, device);
  weight_ = parameter(w, "linear.weight");
  if (bias) {
    Tensor b = init == WeightInit::Glorot ? Tensor::zeros(1, out_features, device)
                                          : init::linear_default(in_features, 1, out_features, generator, device);
    bias_ = parameter(b, "linear.bias");
  }
}

Variable Linear::forward(const Variable& x) const {
  Variable y = matmul(x, weight_);
  return bias_.defined() ? add_bias(y, bias_) : y;
}

NamedParameters Linear::named_parameters() const {
  NamedParameters named{{"weight", weight_}};
  if (bias_.defined()) named.emplace_back("bias", bias_);
  return named;
}

std::vector<Variable> Linear::parameters() const { return parameter_values(named_parameters()); }

std::string Linear::describe() const {
  return "Linear(" + std::to_string(in_features()) + " -> " + std::to_string(out_features()) +
         (bias_.defined() ? ", bias" : "") + ")";
}

}  // namespace edgewise::gnn
