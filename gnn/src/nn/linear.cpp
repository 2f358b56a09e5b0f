// Linear: y = x W + b with PyG's initialisations.
#include "edgewise/gnn/nn/linear.hpp"

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/init.hpp"

namespace edgewise::gnn {

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
