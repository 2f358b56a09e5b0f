// Linear: y = x W + b, W [in, out] (PyG's Linear: weights U(±1/sqrt(in)) by default, or Glorot).
#pragma once

#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/tensor/random.hpp"

namespace edgewise::gnn {

enum class WeightInit { LinearDefault, Glorot };

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, Generator& generator, bool bias = true,
         WeightInit init = WeightInit::LinearDefault, Device device = Device::cpu());
  Variable forward(const Variable& x) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;
  const Variable& weight() const { return weight_; }
  const Variable& bias() const { return bias_; }
  int64_t in_features() const { return weight_.rows(); }
  int64_t out_features() const { return weight_.cols(); }

 private:
  Variable weight_;
  Variable bias_;  // undefined without bias
};

}  // namespace edgewise::gnn
