// Module helpers and the Linear layer.
#include "edgewise/gnn/module.hpp"

#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/init.hpp"
#include "edgewise/gnn/linear.hpp"

namespace edgewise::gnn {

Variable parameter(Tensor value, std::string name) { return Variable(std::move(value), true, std::move(name)); }

void Module::to(Device device) {
  require_available(device, "Module::to");  // before any parameter moves: none is left half-moved
  for (Variable p : parameters()) {
    if (p.device() != device) p.mutable_value() = p.value().to(device);
    p.zero_grad();
  }
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

std::vector<Variable> Linear::parameters() const {
  std::vector<Variable> ps{weight_};
  if (bias_.defined()) ps.push_back(bias_);
  return ps;
}

std::string Linear::describe() const {
  return "Linear(" + std::to_string(in_features()) + " -> " + std::to_string(out_features()) +
         (bias_.defined() ? ", bias" : "") + ")";
}

}  // namespace edgewise::gnn
