// SGD, Adam and AdamW: per-parameter state kept by the parameter's identity.
#include "edgewise/gnn/nn/optim.hpp"

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {
std::vector<ParamGroup> one_group(std::vector<Variable> params, float weight_decay) {
  return {ParamGroup{std::move(params), weight_decay}};
}
}  // namespace

Optimizer::Optimizer(std::vector<ParamGroup> groups, float lr) : groups_(std::move(groups)), lr_(lr) {
  EW_REQUIRE(lr >= 0.0f, "optimizer: lr (", lr, ") must be >= 0");
  for (const ParamGroup& g : groups_) {
    EW_REQUIRE(g.weight_decay >= 0.0f, "optimizer: weight_decay (", g.weight_decay, ") must be >= 0");
    for (const Variable& p : g.params) {
      EW_REQUIRE(p.requires_grad(), "optimizer: parameter '", p.name(), "' does not require grad");
    }
  }
}

void Optimizer::zero_grad() {
  for (ParamGroup& g : groups_) {
    for (Variable& p : g.params) p.zero_grad();
  }
}

Adam::Adam(std::vector<ParamGroup> groups, AdamOptions options, bool decoupled)
    : Optimizer(std::move(groups), options.lr), options_(options), decoupled_(decoupled) {
  EW_REQUIRE(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1,
             "adam: betas (", options.beta1, ", ", options.beta2, ") must lie in [0, 1)");
}

Adam::Adam(std::vector<Variable> params, AdamOptions options, bool decoupled)
    : Adam(one_group(std::move(params), options.weight_decay), options, decoupled) {}

void Adam::step() {
  NoGradGuard guard;
  for (ParamGroup& g : groups_) {
    for (Variable& p : g.params) {
      if (!p.has_grad()) continue;
      State& s = state_[p.impl()];
      if (!s.m.defined() || s.m.device() != p.device()) {
        s.m = Tensor::zeros(p.rows(), p.cols(), p.device());
        s.v = Tensor::zeros(p.rows(), p.cols(), p.device());
      }
      ++s.step;
      ops::adam_update(p.mutable_value(), p.grad(), s.m, s.v,
                       {lr_, options_.beta1, options_.beta2, options_.eps, g.weight_decay, decoupled_, s.step});
    }
  }
}

std::unique_ptr<Optimizer> make_adamw(std::vector<ParamGroup> groups, AdamOptions options) {
  return std::make_unique<Adam>(std::move(groups), options, /*decoupled=*/true);
}

Sgd::Sgd(std::vector<ParamGroup> groups, SgdOptions options)
    : Optimizer(std::move(groups), options.lr), options_(options) {
  EW_REQUIRE(!options.nesterov || (options.momentum > 0 && options.dampening == 0),
             "sgd: Nesterov momentum needs momentum > 0 and dampening 0");
}

Sgd::Sgd(std::vector<Variable> params, SgdOptions options)
    : Sgd(one_group(std::move(params), options.weight_decay), options) {}

void Sgd::step() {
  NoGradGuard guard;
  for (ParamGroup& g : groups_) {
    for (Variable& p : g.params) {
      if (!p.has_grad()) continue;
      Tensor& buf = momentum_[p.impl()];
      const bool first = !buf.defined() || buf.device() != p.device();
      if (first) buf = Tensor::zeros(p.rows(), p.cols(), p.device());
      ops::sgd_update(p.mutable_value(), p.grad(), buf,
                      {lr_, options_.momentum, options_.dampening, g.weight_decay, options_.nesterov, first});
    }
  }
}

}  // namespace edgewise::gnn
