// The tape: gradient accumulation, recording and the reverse topological walk.
#include "edgewise/gnn/autograd/autograd.hpp"

#include <unordered_set>

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {
thread_local bool g_grad_enabled = true;
}  // namespace

bool grad_enabled() noexcept { return g_grad_enabled; }
NoGradGuard::NoGradGuard() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { g_grad_enabled = previous_; }

Variable::Variable(Tensor value, bool requires_grad, std::string name) : impl_(std::make_shared<VariableImpl>()) {
  impl_->value = std::move(value);
  impl_->requires_grad = requires_grad;
  impl_->name = std::move(name);
}

void Variable::accumulate_grad(const Tensor& g) {
  if (!requires_grad()) return;
  EW_REQUIRE(g.rows() == rows() && g.cols() == cols(), "autograd: gradient ", g.shape_str(), " for a value of shape ",
             value().shape_str(), " (variable '", name(), "')");
  if (!impl_->grad.defined()) {
    impl_->grad = g.clone();  // g may be shared with another input's gradient
  } else {
    ops::axpby(1.0f, g, 1.0f, impl_->grad);
  }
}

void Variable::accumulate_grad(Tensor&& g) {
  if (requires_grad() && !impl_->grad.defined() && g.sole_owner() && g.rows() == rows() && g.cols() == cols()) {
    impl_->grad = std::move(g);
    return;
  }
  accumulate_grad(static_cast<const Tensor&>(g));
}

Variable record(Tensor output, std::shared_ptr<Node> node) {
  bool needs_grad = false;
  if (grad_enabled()) {
    for (const Variable& in : node->inputs) needs_grad = needs_grad || in.requires_grad();
  }
  Variable out(std::move(output), needs_grad);
  if (needs_grad) out.set_grad_fn(std::move(node));
  return out;
}

void Variable::backward(const Tensor& seed) {
  EW_REQUIRE(defined(), "backward: undefined Variable");
  EW_REQUIRE(requires_grad(), "backward: this Variable does not require grad (no input to it does)");
  Tensor start = seed;
  if (!start.defined()) {
    EW_REQUIRE(rows() == 1 && cols() == 1, "backward: a non-scalar ", value().shape_str(),
               " output needs a seed gradient of its shape");
    start = Tensor::full(1, 1, 1.0f, device());
  }
  // Reverse topological order by depth-first search from the output.
  std::vector<Variable> order;
  std::unordered_set<const VariableImpl*> seen;
  std::vector<std::pair<Variable, size_t>> stack{{*this, 0}};
  seen.insert(impl_.get());
  while (!stack.empty()) {
    auto& [var, next] = stack.back();
    const auto& fn = var.grad_fn();
    if (fn && next < fn->inputs.size()) {
      Variable child = fn->inputs[next++];
      if (child.requires_grad() && seen.insert(child.impl()).second) stack.emplace_back(child, 0);
    } else {
      order.push_back(var);
      stack.pop_back();
    }
  }
  accumulate_grad(start);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Variable& var = *it;
    if (!var.grad_fn() || !var.has_grad()) continue;
    if (var.impl_.get() == impl_.get()) {
      var.grad_fn()->backward(var.grad());  // the output keeps its gradient
    } else {
      // Every contribution to var's gradient has arrived (reverse topological order),
      // and it is released below anyway.
      Tensor g = std::move(var.impl_->grad);
      var.impl_->grad = Tensor();
      var.grad_fn()->backward_owned(std::move(g));
    }
  }
  // Release the graph: intermediate values and gradients are no longer needed.
  for (Variable& var : order) {
    if (var.grad_fn()) {
      var.impl_->grad_fn.reset();
      if (var.impl_.get() != impl_.get()) var.impl_->grad = Tensor();
    }
  }
}

}  // namespace edgewise::gnn
