// Module: a layer or model holding learnable parameters (Variables that require grad).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/nn/state_dict.hpp"

namespace edgewise::gnn {

// Parameters with their dotted names ("convs.0.lin.weight"), in parameters() order.
using NamedParameters = std::vector<std::pair<std::string, Variable>>;

class Module {
 public:
  virtual ~Module() = default;
  // Every learnable parameter, submodules included, in a stable order.
  virtual std::vector<Variable> parameters() const = 0;
  virtual std::string describe() const = 0;
  // parameters() with dotted names; the default names them by position ("0", "1", ...).
  // The layers use PyG's names (GCNConv "lin.weight", "bias"; SAGEConv "lin_l.*",
  // "lin_r.weight"; GINConv "nn.0.*", "nn.2.*", "eps"; models "convs.<l>.*"), but
  // weights are stored [in, out], the transpose of torch.nn.Linear's [out, in].
  virtual NamedParameters named_parameters() const;

  // Host copies of every parameter, by name.
  StateDict state_dict() const;
  // Copies `state` into the parameters (through the host for device parameters).
  // Every parameter name must be present with the parameter's shape, and no other
  // key; otherwise throws std::invalid_argument naming the key (and both shapes)
  // and leaves every parameter unchanged.
  void load_state_dict(const StateDict& state);
  // The checks of load_state_dict, without copying anything.
  void check_state_dict(const StateDict& state) const;

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

// Appends `module`'s named parameters to `out`, each name prefixed with "<prefix>.".
void append_named_parameters(NamedParameters& out, const std::string& prefix, const Module& module);
// The parameters of `named`, in order.
std::vector<Variable> parameter_values(const NamedParameters& named);

}  // namespace edgewise::gnn
