// GINConv (Xu et al. 2019), PyG semantics: out = mlp((1 + eps) x_i + sum_j x_j),
// eps fixed (default 0) or learnable (train_eps). The MLP is Linear -> ReLU ->
// Linear (PyG leaves the MLP to the user; this is the common choice, without
// batch norm). With sparse input the first linear map is applied before the sum
// (it is linear, so the result is the same) and the sum runs on hidden features.
#pragma once

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/nn/linear.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

struct GINConvOptions {
  float eps = 0.0f;
  bool train_eps = false;
  AggregationOptions aggregation{};  // op stays Sum
};

class GINConv : public Module {
 public:
  GINConv(int64_t in_features, int64_t hidden_features, int64_t out_features, Generator& generator,
          GINConvOptions options = {}, Device device = Device::cpu());
  Variable forward(const Graph& graph, const Variable& x) const;
  Variable forward(const Graph& graph, const SparseTensor& x) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;

 private:
  Variable mlp_tail(const Variable& hidden_pre_bias) const;
  Variable combine(const Graph& graph, const Variable& h) const;  // (1 + eps) h + sum_j h_j

  GINConvOptions options_;
  Linear lin1_, lin2_;
  Variable eps_;  // [1, 1]; a parameter only with train_eps
};

}  // namespace edgewise::gnn
