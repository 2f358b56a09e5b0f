// Optimizers: SGD (momentum, Nesterov), Adam and AdamW, with weight decay per
// parameter group (e.g. Kipf & Welling's GCN decays only the first layer).
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "edgewise/gnn/autograd.hpp"

namespace edgewise::gnn {

struct ParamGroup {
  std::vector<Variable> params;
  float weight_decay = 0.0f;
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

 protected:
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

 private:
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

 private:
  SgdOptions options_;
  std::unordered_map<const VariableImpl*, Tensor> momentum_;
};

}  // namespace edgewise::gnn
