// HeteroConv: each relation's layer on its graph (or the stacked layout for bipartite
// relations), outputs combined per destination type.
#include "edgewise/gnn/nn/hetero_conv.hpp"

#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

std::string quoted(const EdgeType& t) { return "('" + t.src_type + "', '" + t.relation + "', '" + t.dst_type + "')"; }

const Variable& features(const NodeFeatureMap& x, const HeteroGraph& graph, const std::string& type,
                         const EdgeType& edge_type) {
  auto it = x.find(type);
  EW_REQUIRE(it != x.end() && it->second.defined(), "HeteroConv::forward: x has no features for node type '", type,
             "' (needed by edge type ", quoted(edge_type), ")");
  EW_REQUIRE(it->second.rows() == graph.num_nodes(type), "HeteroConv::forward: x['", type, "'] has ",
             it->second.rows(), " rows, node type '", type, "' has ", graph.num_nodes(type), " nodes");
  return it->second;
}

}  // namespace

void HeteroConv::add_layer(Layer layer) {
  const EdgeType& t = layer.edge_type;
  EW_REQUIRE(layer.module != nullptr, "HeteroConv::add: conv for edge type ", quoted(t), " is null");
  for (const Layer& other : layers_) {
    EW_REQUIRE(other.edge_type != t, "HeteroConv::add: edge type ", quoted(t), " already has a layer");
    EW_REQUIRE(other.module != layer.module, "HeteroConv::add: the conv for edge type ", quoted(t),
               " is already the layer of ", quoted(other.edge_type), " (one layer per edge type)");
  }
  EW_REQUIRE(t.src_type == t.dst_type || layer.stacked, "HeteroConv::add: edge type ", quoted(t),
             " is bipartite and ", layer.name,
             " cannot run on a bipartite relation (supported: SAGEConv, GINConv)");
  layer.module->train(training_);
  layers_.push_back(std::move(layer));
}

Variable HeteroConv::run(const Layer& layer, const HeteroGraph& graph, const NodeFeatureMap& x) const {
  const EdgeType& t = layer.edge_type;
  EW_REQUIRE(graph.has_edge_type(t), "HeteroConv::forward: the graph has no edge type ", quoted(t));
  const Variable& x_src = features(x, graph, t.src_type, t);
  if (t.src_type == t.dst_type) return layer.forward(graph.graph(t), x_src);
  const Variable& x_dst = features(x, graph, t.dst_type, t);
  EW_REQUIRE(x_src.cols() == x_dst.cols(), "HeteroConv::forward: x['", t.src_type, "'] has ", x_src.cols(),
             " columns, x['", t.dst_type, "'] has ", x_dst.cols(), "; bipartite edge type ", quoted(t),
             " needs equal widths");
  const int64_t num_src = x_src.rows(), num_dst = x_dst.rows();
  // Destinations follow the sources in the stacked layout; keep their rows.
  Variable y = layer.forward(graph.stacked_graph(t), concat_rows({x_src, x_dst}));
  return slice_rows(y, num_src, num_dst);
}

NodeFeatureMap HeteroConv::forward(const HeteroGraph& graph, const NodeFeatureMap& x) const {
  std::map<std::string, std::vector<Variable>> by_dst;
  for (const Layer& layer : layers_) by_dst[layer.edge_type.dst_type].push_back(run(layer, graph, x));
  NodeFeatureMap out;
  for (auto& [dst, parts] : by_dst) out.emplace(dst, combine_elementwise(parts, aggr_));
  return out;
}

std::vector<EdgeType> HeteroConv::edge_types() const {
  std::vector<EdgeType> out;
  for (const Layer& layer : layers_) out.push_back(layer.edge_type);
  return out;
}

NamedParameters HeteroConv::named_parameters() const {
  NamedParameters named;
  for (const Layer& layer : layers_) append_named_parameters(named, "convs." + to_string(layer.edge_type), *layer.module);
  return named;
}

std::vector<Variable> HeteroConv::parameters() const { return parameter_values(named_parameters()); }

std::string HeteroConv::describe() const {
  std::string s = "HeteroConv(aggr " + std::string(to_string(aggr_));
  for (const Layer& layer : layers_) s += ", " + quoted(layer.edge_type) + ": " + layer.name;
  return s + ")";
}

void HeteroConv::train(bool on) {
  Module::train(on);
  for (Layer& layer : layers_) layer.module->train(on);
}

}  // namespace edgewise::gnn
