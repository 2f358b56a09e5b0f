// Module: a layer or model holding learnable parameters (Variables that require grad).
#pragma once

#include <string>
#include <vector>

#include "edgewise/gnn/autograd.hpp"

namespace edgewise::gnn {

class Module {
 public:
  virtual ~Module() = default;
  // Every learnable parameter, submodules included, in a stable order.
  virtual std::vector<Variable> parameters() const = 0;
  virtual std::string describe() const = 0;

  // Training mode turns dropout on; evaluation mode off (and caches may apply).
  virtual void train(bool on = true) { training_ = on; }
  void eval() { train(false); }
  bool training() const noexcept { return training_; }

  // Moves every parameter to `device` in place (optimizer state follows on its next step).
  void to(Device device);
  int64_t num_parameters() const;

 protected:
  bool training_ = true;
};

// A new learnable parameter holding `value`.
Variable parameter(Tensor value, std::string name);

}  // namespace edgewise::gnn
