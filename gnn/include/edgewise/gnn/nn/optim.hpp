// Optimizers: SGD (momentum, Nesterov), Adam and AdamW, with weight decay per
// parameter group (e.g. Kipf & Welling's GCN decays only the first layer).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/nn/state_dict.hpp"

namespace edgewise::gnn {

struct ParamGroup {
  std::vector<Variable> params;
  float weight_decay = 0.0f;
};

// An optimizer's state, for checkpoints. Entries are keyed "<i>.<name>" by the
// parameter's position i over all groups in order (as torch.optim numbers them);
// parameters that never had a gradient have none. Hyperparameters (lr, betas,
// momentum, weight decay) are not part of it: they come from the constructor.
struct OptimizerState {
  std::string kind;                         // "adam", "adamw" or "sgd"
  // Host copies: Adam "<i>.exp_avg", "<i>.exp_avg_sq"; SGD "<i>.momentum_buffer".
  StateDict tensors;
  std::map<std::string, int64_t> counters;  // Adam "<i>.step"
};

class Optimizer {
 public:
  explicit Optimizer(std::vector<ParamGroup> groups, float lr);
  virtual ~Optimizer() = default;
  // Applies one update to every parameter that received a gradient.
  virtual void step() = 0;
  // Drops all gradients (call before each backward).
  void zero_grad();
  float lr() const noexcept { return lr_; }
  void set_lr(float lr) noexcept { lr_ = lr; }

  virtual OptimizerState state_dict() const = 0;
  // Replaces the state with `state` (copied to each parameter's device). Throws
  // std::invalid_argument naming the key — another optimizer kind, an unknown,
  // missing or out-of-range key, a shape unlike its parameter's, a step < 1 —
  // and then leaves the state unchanged.
  void load_state_dict(const OptimizerState& state);
  // The checks of load_state_dict, without changing anything.
  virtual void check_state_dict(const OptimizerState& state) const = 0;

 protected:
  // Every parameter over all groups, in order (position i is state key i).
  std::vector<Variable> all_params() const;
  virtual void apply_state_dict(const OptimizerState& state) = 0;

  std::vector<ParamGroup> groups_;
  float lr_;
};

struct AdamOptions {
  float lr = 0.01f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;  // default for groups that set none
};

// Adam (L2 weight decay added to the gradient, as torch.optim.Adam) or, with
// decoupled = true, AdamW (weights decayed directly, as torch.optim.AdamW).
class Adam : public Optimizer {
 public:
  Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled = false);
  Adam(std::vector<Variable> params, AdamOptions options, bool decoupled = false);
  void step() override;
  OptimizerState state_dict() const override;
  void check_state_dict(const OptimizerState& state) const override;

 private:
  void apply_state_dict(const OptimizerState& state) override;

  struct State {
    Tensor m, v;
    int64_t step = 0;
  };
  AdamOptions options_;
  bool decoupled_;
  std::unordered_map<const VariableImpl*, State> state_;
};

std::unique_ptr<Optimizer> make_adamw(std::vector<ParamGroup> groups, AdamOptions options);

struct SgdOptions {
  float lr = 0.01f;
  float momentum = 0.0f;
  float dampening = 0.0f;
  float weight_decay = 0.0f;
  bool nesterov = false;
};

class Sgd : public Optimizer {
 public:
  Sgd(std::vector<ParamGroup> groups, SgdOptions options);
  Sgd(std::vector<Variable> params, SgdOptions options);
  void step() override;
  OptimizerState state_dict() const override;
  void check_state_dict(const OptimizerState& state) const override;

 private:
  void apply_state_dict(const OptimizerState& state) override;

  SgdOptions options_;
  std::unordered_map<const VariableImpl*, Tensor> momentum_;
};

}  // namespace edgewise::gnn
