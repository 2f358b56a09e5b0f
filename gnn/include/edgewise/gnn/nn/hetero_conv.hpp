// HeteroConv: PyG's HeteroConv — one homogeneous layer per edge type, run on that
// relation, and the outputs into one destination type combined elementwise by `aggr`
// (sum by default; any ReduceOp: 'sum', 'mean', 'min', 'max', ... as PyG's aggr).
//
// Relations within one node type (src_type == dst_type) run the layer on the
// relation's graph with x[type]. A bipartite relation (src_type != dst_type) needs a
// layer that can take (x_src, x_dst): Graph has no bipartite form, so such a layer
// runs on HeteroGraph::stacked_graph with [x_src; x_dst] and keeps the destination
// rows, which equals PyG's bipartite result for a layer whose node i sees only its
// in-neighbours and its own row (SAGEConv, GINConv; kRunsOnStackedLayout). Both types
// then need the same feature width (PyG's tuple in_channels is not offered). GCNConv
// adds self loops and is refused on bipartite relations, as PyG refuses it.
// PyG skips a relation whose features are missing; here that is an error naming the
// type, as is a relation the graph lacks. Parameters are named
// "convs.<src>__<rel>__<dst>.<layer's name>" (PyG's ModuleDict keys), in the order
// the layers were added.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/graph/hetero_graph.hpp"
#include "edgewise/gnn/message_passing/hetero_aggregate.hpp"
#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/nn/gin_conv.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/nn/sage_conv.hpp"

namespace edgewise::gnn {

// Whether a layer gives PyG's bipartite result on the stacked layout (see above).
// A new layer opts in with a specialisation next to its own header's types.
template <class Conv>
inline constexpr bool kRunsOnStackedLayout = false;
template <>
inline constexpr bool kRunsOnStackedLayout<SAGEConv> = true;
template <>
inline constexpr bool kRunsOnStackedLayout<GINConv> = true;

class HeteroConv : public Module {
 public:
  explicit HeteroConv(ReduceOp aggr = ReduceOp::Sum) : aggr_(aggr) {}

  // The layer for `edge_type` (a layer with forward(const Graph&, const Variable&)).
  // Throws std::invalid_argument naming the edge type when it already has a layer,
  // when `conv` is null or already added for another edge type (its parameters would
  // be listed twice), or when the relation is bipartite and the layer cannot run on
  // the stacked layout.
  template <class Conv>
  void add(const EdgeType& edge_type, std::shared_ptr<Conv> conv) {
    Layer layer;
    layer.edge_type = edge_type;
    layer.stacked = kRunsOnStackedLayout<Conv>;
    layer.name = conv ? conv->describe() : std::string();
    layer.forward = [c = conv.get()](const Graph& g, const Variable& x) { return c->forward(g, x); };
    layer.module = std::move(conv);
    add_layer(std::move(layer));
  }

  // Outputs for every destination type of an added layer. Needs x[src_type] for every
  // layer, and x[dst_type] too for a bipartite one, each with num_nodes(type) rows.
  NodeFeatureMap forward(const HeteroGraph& graph, const NodeFeatureMap& x) const;

  std::vector<EdgeType> edge_types() const;
  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;
  void train(bool on = true) override;

 private:
  struct Layer {
    EdgeType edge_type;
    std::shared_ptr<Module> module;
    std::function<Variable(const Graph&, const Variable&)> forward;
    bool stacked = false;  // may run on the stacked layout (bipartite relations)
    std::string name;
  };
  void add_layer(Layer layer);
  // The layer's output for its destination type, [num_nodes(dst_type), out].
  Variable run(const Layer& layer, const HeteroGraph& graph, const NodeFeatureMap& x) const;

  ReduceOp aggr_;
  std::vector<Layer> layers_;  // in the order added
};

}  // namespace edgewise::gnn
