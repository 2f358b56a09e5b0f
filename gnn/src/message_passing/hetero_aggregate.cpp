// Relational aggregation: per relation aggregate() on the relation's square graph
// (source rows padded, destination rows sliced), then an elementwise combine that is
// itself an aggregate() over a graph stacking the K parts, so every ReduceOp and its
// backward come from the kernels.
#include "edgewise/gnn/message_passing/hetero_aggregate.hpp"

#include <algorithm>
#include <limits>

#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// K parts of N rows stacked as K*N nodes; node i < N receives the edges from
// k*N + i for k = 0..K-1, in k order (ties of min/max go to the earlier part). Built
// as a CSR directly: no sort, O(K N) host work and one upload.
Graph stack_graph(int64_t parts, int64_t rows, Device device) {
  const int64_t nodes = parts * rows;
  EW_REQUIRE(nodes < std::numeric_limits<int32_t>::max(), "combine_elementwise: ", parts, " parts of ", rows,
             " rows exceed the graph's int32 node ids");
  std::vector<int64_t> offsets(static_cast<size_t>(nodes + 1));
  for (int64_t v = 0; v <= nodes; ++v) offsets[v] = std::min(v, rows) * parts;
  std::vector<int32_t> sources(static_cast<size_t>(nodes));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < parts; ++k) sources[i * parts + k] = static_cast<int32_t>(k * rows + i);
  }
  return Graph::from_csr(offsets, sources, {}, device);
}

}  // namespace

Variable aggregate_relation(const HeteroGraph& graph, const EdgeType& edge_type, const Variable& x_src,
                            const AggregationOptions& options) {
  const Graph& g = graph.graph(edge_type);
  const int64_t num_src = graph.num_nodes(edge_type.src_type);
  const int64_t num_dst = graph.num_nodes(edge_type.dst_type);
  EW_REQUIRE(x_src.rows() == num_src, "aggregate_relation: x_src has ", x_src.rows(), " rows, node type '",
             edge_type.src_type, "' has ", num_src, " nodes");
  // The square graph has max(num_src, num_dst) nodes with the ids unchanged.
  Variable out = aggregate(g, pad_rows(x_src, g.num_nodes()), options);
  return slice_rows(out, 0, num_dst);
}

Variable combine_elementwise(const std::vector<Variable>& parts, ReduceOp op) {
  EW_REQUIRE(!parts.empty(), "combine_elementwise: parts must not be empty");
  for (size_t k = 1; k < parts.size(); ++k) {
    EW_REQUIRE(parts[k].rows() == parts[0].rows() && parts[k].cols() == parts[0].cols(), "combine_elementwise: parts[",
               k, "] has shape ", parts[k].value().shape_str(), ", parts[0] has ", parts[0].value().shape_str());
  }
  if (parts.size() == 1) return parts[0];
  const int64_t rows = parts[0].rows();
  AggregationOptions options;
  options.op = op;
  options.strategy = AggregationStrategy::Segment;  // every output row has K inputs: no reason to scatter
  Variable stacked = concat_rows(parts);
  Variable out = aggregate(stack_graph(static_cast<int64_t>(parts.size()), rows, stacked.device()), stacked, options);
  return slice_rows(out, 0, rows);
}

NodeFeatureMap hetero_aggregate(const HeteroGraph& graph, const NodeFeatureMap& x,
                                const HeteroAggregationOptions& options) {
  // Validate every input before computing anything.
  for (const EdgeType& t : graph.edge_types()) {
    auto it = x.find(t.src_type);
    EW_REQUIRE(it != x.end() && it->second.defined(), "hetero_aggregate: x has no features for node type '",
               t.src_type, "' (source of relation '", t.relation, "')");
    EW_REQUIRE(it->second.rows() == graph.num_nodes(t.src_type), "hetero_aggregate: x['", t.src_type, "'] has ",
               it->second.rows(), " rows, node type '", t.src_type, "' has ", graph.num_nodes(t.src_type), " nodes");
  }
  NodeFeatureMap out;
  for (const std::string& dst : graph.node_types()) {
    const std::vector<EdgeType> into = graph.edge_types_into(dst);
    if (into.empty()) continue;
    for (const EdgeType& t : into) {
      EW_REQUIRE(x.at(t.src_type).cols() == x.at(into[0].src_type).cols(), "hetero_aggregate: x['", t.src_type,
                 "'] has ", x.at(t.src_type).cols(), " columns, x['", into[0].src_type, "'] has ",
                 x.at(into[0].src_type).cols(), "; relations into '", dst, "' must agree to be combined");
    }
    std::vector<Variable> parts;
    for (const EdgeType& t : into) parts.push_back(aggregate_relation(graph, t, x.at(t.src_type), options.relation));
    out.emplace(dst, combine_elementwise(parts, options.combine));
  }
  return out;
}

}  // namespace edgewise::gnn
