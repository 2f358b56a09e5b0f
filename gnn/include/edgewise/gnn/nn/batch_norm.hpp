// BatchNorm1d over the rows of [N, C] features, as torch.nn.BatchNorm1d: in
// training, y = (x - mean) / sqrt(var + eps) * weight + bias with the batch's
// mean and biased variance per column, and the running statistics updated with
// momentum (the running variance unbiased); in evaluation, the running statistics.
// Forward and backward run on the host (tensors on a GPU pass through it).
#pragma once

#include "edgewise/gnn/nn/module.hpp"

namespace edgewise::gnn {

class BatchNorm1d : public Module {
 public:
  explicit BatchNorm1d(int64_t features, float eps = 1e-5f, float momentum = 0.1f, Device device = Device::cpu());
  // x [N, C]; training needs N >= 2 (a single row has no variance), as in PyTorch.
  Variable forward(const Variable& x);

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;  // "weight", "bias"
  std::string describe() const override;
  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }

 private:
  float eps_, momentum_;
  Variable weight_, bias_;              // [1, C]
  Tensor running_mean_, running_var_;  // [1, C]
};

}  // namespace edgewise::gnn
