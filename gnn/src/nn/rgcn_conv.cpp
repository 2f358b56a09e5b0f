// RGCNConv: per-relation aggregation, then the relation's weight (plain, basis or
// block-diagonal), summed with the root term and the bias.
#include "edgewise/gnn/nn/rgcn_conv.hpp"

#include <cmath>
#include <string>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "edgewise/gnn/graph/relation_split.hpp"
#include "edgewise/gnn/nn/init.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// PyG's glorot on a tensor whose last two dimensions are [rows, cols].
Tensor glorot(int64_t total_rows, int64_t rows, int64_t cols, Generator& generator, Device device) {
  const float a = static_cast<float>(std::sqrt(6.0 / static_cast<double>(rows + cols)));
  return init::uniform(total_rows, cols, -a, a, generator, device);
}

}  // namespace

RGCNConv::RGCNConv(int64_t in_features, int64_t out_features, int64_t num_relations, Generator& generator,
                   RGCNConvOptions options, Device device)
    : options_(options), in_features_(in_features), out_features_(out_features), num_relations_(num_relations) {
  EW_REQUIRE(in_features >= 1 && out_features >= 1, "RGCNConv: in_features (", in_features, ") and out_features (",
             out_features, ") must be positive");
  EW_REQUIRE(num_relations >= 1, "RGCNConv: num_relations (", num_relations, ") must be positive");
  EW_REQUIRE(options.num_bases >= 0 && options.num_blocks >= 0, "RGCNConv: num_bases (", options.num_bases,
             ") and num_blocks (", options.num_blocks, ") must not be negative");
  EW_REQUIRE(options.num_bases == 0 || options.num_blocks == 0, "RGCNConv: num_bases (", options.num_bases,
             ") and num_blocks (", options.num_blocks, ") cannot both be set");
  const int64_t blocks = options.num_blocks;
  if (blocks > 0) {
    EW_REQUIRE(in_features % blocks == 0, "RGCNConv: in_features (", in_features, ") must be divisible by num_blocks (",
               blocks, ")");
    EW_REQUIRE(out_features % blocks == 0, "RGCNConv: out_features (", out_features,
               ") must be divisible by num_blocks (", blocks, ")");
    const int64_t bi = in_features / blocks, bo = out_features / blocks;
    weight_ = parameter(glorot(num_relations * blocks * bi, bi, bo, generator, device), "rgcn.weight");
  } else if (options.num_bases > 0) {
    const int64_t bases = options.num_bases;
    weight_ = parameter(glorot(bases * in_features, in_features, out_features, generator, device), "rgcn.weight");
    comp_ = parameter(glorot(num_relations, num_relations, bases, generator, device), "rgcn.comp");
  } else {
    weight_ = parameter(glorot(num_relations * in_features, in_features, out_features, generator, device),
                        "rgcn.weight");
  }
  if (options.root_weight) {
    root_ = parameter(init::glorot_uniform(in_features, out_features, generator, device), "rgcn.root");
  }
  if (options.bias) bias_ = parameter(Tensor::zeros(1, out_features, device), "rgcn.bias");
}

std::vector<Variable> RGCNConv::relation_weights() const {
  std::vector<Variable> w;
  w.reserve(static_cast<size_t>(num_relations_));
  if (options_.num_blocks > 0) {
    const int64_t rows = options_.num_blocks * (in_features_ / options_.num_blocks);  // == in_features_
    for (int64_t r = 0; r < num_relations_; ++r) {
      w.push_back(block_diagonal(slice_rows(weight_, r * rows, rows), options_.num_blocks));
    }
    return w;
  }
  Variable all = weight_;  // [R * in, out]
  if (options_.num_bases > 0) {
    // comp [R, B] @ V [B, in * out] = every W_r flattened, [R, in * out].
    const int64_t bases = options_.num_bases;
    all = reshape(matmul(comp_, reshape(weight_, bases, in_features_ * out_features_)), num_relations_ * in_features_,
                  out_features_);
  }
  for (int64_t r = 0; r < num_relations_; ++r) w.push_back(slice_rows(all, r * in_features_, in_features_));
  return w;
}

Variable RGCNConv::relation_weight(int64_t r) const {
  EW_REQUIRE(r >= 0 && r < num_relations_, "RGCNConv::relation_weight: r (", r, ") must lie in [0, ", num_relations_,
             ")");
  return relation_weights()[static_cast<size_t>(r)];
}

Variable RGCNConv::forward(const Graph& graph, std::span<const int64_t> edge_type, const Variable& x) const {
  EW_REQUIRE(static_cast<int64_t>(edge_type.size()) == graph.num_edges(), "RGCNConv::forward: edge_type.size() (",
             edge_type.size(), ") must equal the graph's edge count (", graph.num_edges(), ")");
  for (size_t e = 0; e < edge_type.size(); ++e) {
    EW_REQUIRE(edge_type[e] >= 0 && edge_type[e] < num_relations_, "RGCNConv::forward: edge_type[", e, "] (",
               edge_type[e], ") must lie in [0, num_relations = ", num_relations_, ")");
  }
  return forward(split_by_relation(graph, edge_type, num_relations_), x);
}

Variable RGCNConv::forward(const std::vector<Graph>& relation_graphs, const Variable& x) const {
  EW_REQUIRE(static_cast<int64_t>(relation_graphs.size()) == num_relations_, "RGCNConv::forward: relation_graphs.size() (",
             relation_graphs.size(), ") must equal num_relations (", num_relations_, ")");
  EW_REQUIRE(x.cols() == in_features_, "RGCNConv::forward: x has ", x.cols(), " columns, in_features is ",
             in_features_);
  for (size_t r = 0; r < relation_graphs.size(); ++r) {
    EW_REQUIRE(relation_graphs[r].defined() && relation_graphs[r].num_nodes() == x.rows(),
               "RGCNConv::forward: relation_graphs[", r, "] must be a graph over x's ", x.rows(), " nodes");
  }
  AggregationOptions agg = options_.aggregation;
  agg.op = options_.aggr;
  agg.use_edge_weight = false;  // PyG's RGCNConv takes no edge weights
  const std::vector<Variable> w = relation_weights();
  Variable out;
  for (size_t r = 0; r < relation_graphs.size(); ++r) {
    // A relation without edges adds 0 (every aggregate of nothing is 0): skip its work.
    if (relation_graphs[r].num_edges() == 0) continue;
    Variable h = matmul(aggregate(relation_graphs[r], x, agg), w[r]);
    out = out.defined() ? add(out, h) : h;
  }
  if (root_.defined()) {
    Variable h = matmul(x, root_);
    out = out.defined() ? add(out, h) : h;
  }
  if (!out.defined()) out = Variable(Tensor::zeros(x.rows(), out_features_, x.device()));
  return bias_.defined() ? add_bias(out, bias_) : out;
}

NamedParameters RGCNConv::named_parameters() const {
  NamedParameters named{{"weight", weight_}};
  if (comp_.defined()) named.emplace_back("comp", comp_);
  if (root_.defined()) named.emplace_back("root", root_);
  if (bias_.defined()) named.emplace_back("bias", bias_);
  return named;
}

std::vector<Variable> RGCNConv::parameters() const { return parameter_values(named_parameters()); }

std::string RGCNConv::describe() const {
  std::string s = "RGCNConv(" + std::to_string(in_features_) + " -> " + std::to_string(out_features_) + ", " +
                  std::to_string(num_relations_) + " relations, aggr " + std::string(to_string(options_.aggr));
  if (options_.num_bases > 0) s += ", " + std::to_string(options_.num_bases) + " bases";
  if (options_.num_blocks > 0) s += ", " + std::to_string(options_.num_blocks) + " blocks";
  return s + ")";
}

}  // namespace edgewise::gnn
