// Module: moving parameters, counting them, weight-decay groups.
#include "edgewise/gnn/nn/module.hpp"

#include <algorithm>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/stream.hpp"

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

}  // namespace edgewise::gnn
