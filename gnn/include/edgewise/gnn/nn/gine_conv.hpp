// GINEConv (Hu et al. 2020, "Strategies for Pre-training Graph Neural Networks"), PyG
// semantics: GIN whose messages see the edge's features,
//   out_i = mlp((1 + eps) x_i + sum over edges j -> i of ReLU(x_j + lin(e_ji)))
// with e_ji the edge's row of Graph::edge_attr() ([E, edge_dim], CSR order) and lin an
// affine map edge_dim -> in_features (PyG's edge_dim argument; with edge_dim 0 there is
// no lin and the edge features must be in_features wide, as PyG without edge_dim).
// mlp is Linear -> ReLU -> Linear as in GINConv; eps fixed or learnable (train_eps).
// Parameter names follow PyG (nn = Sequential(Linear, ReLU, Linear)): nn.0.*, nn.2.*,
// lin.*, eps. Messages are materialised ([E, in_features]): the ReLU sits on each edge.
#pragma once

#include <optional>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/nn/linear.hpp"
#include "edgewise/gnn/nn/module.hpp"

namespace edgewise::gnn {

struct GINEConvOptions {
  float eps = 0.0f;
  bool train_eps = false;
  int64_t edge_dim = 0;  // width of the graph's edge features; 0: they are in_features wide, no lin
  AggregationOptions aggregation{};  // op stays Sum
};

class GINEConv : public Module {
 public:
  GINEConv(int64_t in_features, int64_t hidden_features, int64_t out_features, Generator& generator,
           GINEConvOptions options = {}, Device device = Device::cpu());
  // graph must carry edge features (Graph::with_edge_attr) of the configured width.
  Variable forward(const Graph& graph, const Variable& x) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;

 private:
  GINEConvOptions options_;
  int64_t in_features_;
  std::optional<Linear> edge_lin_;  // PyG's `lin`; absent with edge_dim 0
  Linear lin1_, lin2_;
  Variable eps_;  // [1, 1]; a parameter only with train_eps
};

}  // namespace edgewise::gnn
