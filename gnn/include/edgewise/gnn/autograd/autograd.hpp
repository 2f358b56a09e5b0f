// A small reverse-mode tape over the engine's tensor ops — enough for user-written
// GNN models, not a general tensor library. A Variable holds a value, a gradient
// and the op that produced it; backward() walks the recorded ops in reverse
// topological order and accumulates gradients into every Variable that requires them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn {

struct Node;

struct VariableImpl {
  Tensor value;
  Tensor grad;  // undefined until a gradient arrives
  bool requires_grad = false;
  std::shared_ptr<Node> grad_fn;  // the op that produced this value (null for leaves)
  std::string name;
};

class Variable {
 public:
  Variable() = default;
  explicit Variable(Tensor value, bool requires_grad = false, std::string name = {});

  bool defined() const noexcept { return impl_ != nullptr; }
  const Tensor& value() const { return impl_->value; }
  Tensor& mutable_value() { return impl_->value; }
  // The accumulated gradient (undefined Tensor when none arrived).
  const Tensor& grad() const { return impl_->grad; }
  bool has_grad() const { return impl_->grad.defined(); }
  bool requires_grad() const { return impl_ && impl_->requires_grad; }
  const std::string& name() const { return impl_->name; }
  int64_t rows() const { return impl_->value.rows(); }
  int64_t cols() const { return impl_->value.cols(); }
  Device device() const { return impl_->value.device(); }
  const std::shared_ptr<Node>& grad_fn() const { return impl_->grad_fn; }

  // Drops the gradient (the next backward starts from zero).
  void zero_grad() { impl_->grad = Tensor(); }
  // Back-propagates from this Variable: a [1, 1] scalar is seeded with 1, anything
  // else needs `seed` of its shape. The recorded ops are released afterwards.
  void backward(const Tensor& seed = Tensor());

  // Adds g into the gradient (used by the ops' backward functions).
  void accumulate_grad(const Tensor& g);
  // Same, but a first gradient that nobody else holds is kept instead of copied
  // (backward passes hand over fresh [N, C] tensors; copying each cost an epoch ~5 %).
  void accumulate_grad(Tensor&& g);
  // Marks this Variable as produced by `node` (used when recording an op).
  void set_grad_fn(std::shared_ptr<Node> node) { impl_->grad_fn = std::move(node); }

  const VariableImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<VariableImpl> impl_;
};

// One recorded op: keeps its inputs (and what backward needs) alive.
struct Node {
  virtual ~Node() = default;
  // Receives d loss / d output and accumulates into the inputs that require grad.
  virtual void backward(const Tensor& grad_output) = 0;
  // The same, owning d loss / d output: backward() hands over the intermediate
  // gradients it would drop afterwards, so a node that passes its gradient on
  // unchanged can move it into an input instead of copying it.
  virtual void backward_owned(Tensor&& grad_output) { backward(grad_output); }
  virtual const char* name() const = 0;
  std::vector<Variable> inputs;
};

// Whether ops record themselves for backward on this thread (on by default).
bool grad_enabled() noexcept;
// Disables recording for its lifetime (evaluation, optimizer steps).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Records `node` as the producer of `output` when grad mode is on and any input
// requires grad; the output then requires grad too.
Variable record(Tensor output, std::shared_ptr<Node> node);

}  // namespace edgewise::gnn
