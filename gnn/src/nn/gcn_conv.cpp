// GCNConv: x W and propagation over the cached normalised graph (in the cheaper
// order for dense x), bias.
#include "edgewise/gnn/nn/gcn_conv.hpp"

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/init.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

GCNConv::GCNConv(int64_t in_features, int64_t out_features, Generator& generator, GCNConvOptions options,
                 Device device)
    : options_(options) {
  EW_REQUIRE(options.aggregation.op == ReduceOp::Sum, "GCNConv: aggregation op must be sum");
  weight_ = parameter(init::glorot_uniform(in_features, out_features, generator, device), "gcn.weight");
  if (options.bias) bias_ = parameter(Tensor::zeros(1, out_features, device), "gcn.bias");
}

Graph GCNConv::propagation_graph(const Graph& graph) const {
  if (options_.cached) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (cached_for_ != 0 && cached_for_ == graph.id()) return cached_graph_;
  }
  const float fill = options_.improved ? 2.0f : 1.0f;
  Graph g = options_.normalize ? graph.gcn_normalized(options_.add_self_loops, fill)
                               : (options_.add_self_loops ? graph.with_self_loops(fill) : graph);
  if (options_.cached) {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    cached_graph_ = g;
    cached_for_ = graph.id();
  }
  return g;
}

Variable GCNConv::propagate(const Graph& graph, const Variable& xw) const {
  Variable out = aggregate(propagation_graph(graph), xw, options_.aggregation);
  return bias_.defined() ? add_bias(out, bias_) : out;
}

Variable GCNConv::forward(const Graph& graph, const Variable& x) const {
  const int64_t in = weight_.rows(), out = weight_.cols();
  const bool propagate_first = in < out || (in == out && !x.requires_grad());
  if (propagate_first) {
    Variable ax = aggregate(propagation_graph(graph), x, options_.aggregation);
    Variable y = matmul(ax, weight_);
    return bias_.defined() ? add_bias(y, bias_) : y;
  }
  return propagate(graph, matmul(x, weight_));
}

Variable GCNConv::forward(const Graph& graph, const SparseTensor& x) const {
  return propagate(graph, sparse_matmul(x, weight_));
}

// PyG's names: the weight lives in GCNConv.lin, the bias on the layer.
NamedParameters GCNConv::named_parameters() const {
  NamedParameters named{{"lin.weight", weight_}};
  if (bias_.defined()) named.emplace_back("bias", bias_);
  return named;
}

std::vector<Variable> GCNConv::parameters() const { return parameter_values(named_parameters()); }

std::string GCNConv::describe() const {
  return "GCNConv(" + std::to_string(weight_.rows()) + " -> " + std::to_string(weight_.cols()) + ")";
}

}  // namespace edgewise::gnn
