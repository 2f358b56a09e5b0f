// SAGEConv (Hamilton et al. 2017), PyG semantics:
//   out = lin_l(aggr_{j in N(i)} x_j) + lin_r(x_i),  optionally L2-normalised per row.
// lin_l has the bias, lin_r none (root_weight adds lin_r). Aggregators: Mean, Sum,
// and MaxPool — the paper's pooling aggregator, PyG's aggr='max' with project=True:
// x_j is first projected by relu(x W_p + b_p), then max-aggregated; Var and Std —
// PyG's aggr='var' / 'std' (population variance; std clamped at 1e-5 and masked,
// PNA's aggregators), aggregated before lin_l like PyG; dense features only.
// Mean and Sum commute with the linear map, so x W_l is computed first when that is
// cheaper (fewer output than input features, or sparse input) — same result.
#pragma once

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/nn/linear.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

enum class SageAggregator { Mean, Sum, MaxPool, Var, Std };
// "mean", "sum", "max" / "maxpool", "var", "std"
SageAggregator parse_sage_aggregator(const std::string& name);

struct SAGEConvOptions {
  SageAggregator aggregator = SageAggregator::Mean;
  bool root_weight = true;
  bool normalize = false;
  bool bias = true;
  AggregationOptions aggregation{};  // strategy/form; the op follows `aggregator`
};

class SAGEConv : public Module {
 public:
  SAGEConv(int64_t in_features, int64_t out_features, Generator& generator, SAGEConvOptions options = {},
           Device device = Device::cpu());
  Variable forward(const Graph& graph, const Variable& x) const;
  Variable forward(const Graph& graph, const SparseTensor& x) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;

 private:
  // x projected by `w` (dense or sparse input).
  template <class X>
  Variable combine(const Graph& graph, const X& x) const;

  SAGEConvOptions options_;
  int64_t in_features_, out_features_;
  Linear lin_l_;                    // on the aggregate, with bias
  std::unique_ptr<Linear> lin_r_;   // on the root, no bias (root_weight)
  std::unique_ptr<Linear> project_; // MaxPool: relu(x W_p + b_p) before aggregation
};

}  // namespace edgewise::gnn
