// GATConv and GATv2Conv: projections, per-edge scores (sddmm), edge softmax, attention
// dropout, multi-head aggregation, head concat / mean, bias.
#include "edgewise/gnn/nn/gat_conv.hpp"

#include "edgewise/gnn/message_passing/attention.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/init.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// PyG's glorot on an attention vector of shape [1, H, C]: bound sqrt(6 / (H + C)).
Tensor attention_init(int64_t heads, int64_t out, Generator& generator, Device device) {
  return init::glorot_uniform(heads, out, generator, device).reshape(1, heads * out);
}

}  // namespace

GATConvBase::GATConvBase(int64_t in_features, int64_t out_features, GATConvOptions options, Generator&,
                         Device device)
    : in_features_(in_features), out_features_(out_features), options_(options) {
  EW_REQUIRE(in_features > 0 && out_features > 0, "GATConv: in_features (", in_features, ") and out_features (",
             out_features, ") must be positive");
  EW_REQUIRE(options.heads >= 1, "GATConv: heads (", options.heads, ") must be >= 1");
  EW_REQUIRE(options.dropout >= 0.0f && options.dropout < 1.0f, "GATConv: dropout (", options.dropout,
             ") must lie in [0, 1)");
  if (options.bias) bias_ = parameter(Tensor::zeros(1, output_features(), device), "bias");
}

Graph GATConvBase::attention_graph(const Graph& graph) const {
  if (!options_.add_self_loops) return graph;
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cached_for_ == 0 || cached_for_ != graph.id()) {
    cached_graph_ = graph.with_self_loops(1.0f);
    cached_for_ = graph.id();
  }
  return cached_graph_;
}

Variable GATConvBase::attend(const Graph& graph, const Variable& scores, const Variable& values,
                             Generator& generator) const {
  Variable alpha = edge_softmax(graph, leaky_relu(scores, options_.negative_slope));
  alpha = dropout(alpha, options_.dropout, training(), generator);
  Variable out = attention_aggregate(graph, alpha, values);
  if (!options_.concat) out = head_mean(out, options_.heads);
  return bias_.defined() ? add_bias(out, bias_) : out;
}

GATConv::GATConv(int64_t in_features, int64_t out_features, Generator& generator, GATConvOptions options,
                 Device device)
    : GATConvBase(in_features, out_features, options, generator, device) {
  const int64_t hc = options.heads * out_features;
  weight_ = parameter(init::glorot_uniform(in_features, hc, generator, device), "lin.weight");
  att_src_ = parameter(attention_init(options.heads, out_features, generator, device), "att_src");
  att_dst_ = parameter(attention_init(options.heads, out_features, generator, device), "att_dst");
}

Variable GATConv::propagate(const Graph& graph, const Variable& xw, Generator& generator) const {
  EW_REQUIRE(xw.rows() == graph.num_nodes(), "GATConv: x has ", xw.rows(), " rows but the graph has ",
             graph.num_nodes(), " nodes");
  const Graph g = attention_graph(graph);
  const int64_t heads = options_.heads;
  Variable scores = edge_score_add(g, head_dot(xw, att_src_, heads), head_dot(xw, att_dst_, heads));
  return attend(g, scores, xw, generator);
}

Variable GATConv::forward(const Graph& graph, const Variable& x, Generator& generator) const {
  EW_REQUIRE(x.cols() == in_features_, "GATConv: x has ", x.cols(), " features, expected ", in_features_);
  return propagate(graph, matmul(x, weight_), generator);
}

Variable GATConv::forward(const Graph& graph, const SparseTensor& x, Generator& generator) const {
  return propagate(graph, sparse_matmul(x, weight_), generator);
}

std::vector<Variable> GATConv::parameters() const {
  std::vector<Variable> ps{weight_, att_src_, att_dst_};
  if (bias_.defined()) ps.push_back(bias_);
  return ps;
}

std::string GATConv::describe() const {
  return "GATConv(" + std::to_string(in_features_) + " -> " + std::to_string(out_features_) + ", heads " +
         std::to_string(options_.heads) + (options_.concat ? ", concat)" : ", mean)");
}

GATv2Conv::GATv2Conv(int64_t in_features, int64_t out_features, Generator& generator, GATConvOptions options,
                     Device device)
    : GATConvBase(in_features, out_features, options, generator, device) {
  const int64_t hc = options.heads * out_features;
  weight_l_ = parameter(init::glorot_uniform(in_features, hc, generator, device), "lin_l.weight");
  bias_l_ = parameter(Tensor::zeros(1, hc, device), "lin_l.bias");
  weight_r_ = parameter(init::glorot_uniform(in_features, hc, generator, device), "lin_r.weight");
  bias_r_ = parameter(Tensor::zeros(1, hc, device), "lin_r.bias");
  att_ = parameter(attention_init(options.heads, out_features, generator, device), "att");
}

Variable GATv2Conv::forward(const Graph& graph, const Variable& x, Generator& generator) const {
  EW_REQUIRE(x.cols() == in_features_, "GATv2Conv: x has ", x.cols(), " features, expected ", in_features_);
  EW_REQUIRE(x.rows() == graph.num_nodes(), "GATv2Conv: x has ", x.rows(), " rows but the graph has ",
             graph.num_nodes(), " nodes");
  const Graph g = attention_graph(graph);
  Variable x_l = add_bias(matmul(x, weight_l_), bias_l_);
  Variable x_r = add_bias(matmul(x, weight_r_), bias_r_);
  // e_ij = att . LeakyReLU(x_l[j] + x_r[i]): the sum is the additive sddmm over H*C columns
  // (the activation comes before the dot product, so attend() is not used here).
  Variable pre = leaky_relu(edge_score_add(g, x_l, x_r), options_.negative_slope);
  Variable scores = head_dot(pre, att_, options_.heads);
  Variable alpha = edge_softmax(g, scores);
  alpha = dropout(alpha, options_.dropout, training(), generator);
  Variable out = attention_aggregate(g, alpha, x_l);
  if (!options_.concat) out = head_mean(out, options_.heads);
  return bias_.defined() ? add_bias(out, bias_) : out;
}

std::vector<Variable> GATv2Conv::parameters() const {
  std::vector<Variable> ps{weight_l_, bias_l_, weight_r_, bias_r_, att_};
  if (bias_.defined()) ps.push_back(bias_);
  return ps;
}

std::string GATv2Conv::describe() const {
  return "GATv2Conv(" + std::to_string(in_features_) + " -> " + std::to_string(out_features_) + ", heads " +
         std::to_string(options_.heads) + (options_.concat ? ", concat)" : ", mean)");
}

}  // namespace edgewise::gnn
