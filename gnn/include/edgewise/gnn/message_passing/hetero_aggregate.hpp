// Relational aggregation on a HeteroGraph: each relation (s, r, d) aggregates the
// features of its source type into its destination type with aggregate()
// (aggregate.hpp: any ReduceOp, fused or materialised), then the relations into one
// destination type are combined elementwise with a second ReduceOp — PyG's
// HeteroConv `aggr` ('sum', 'mean', 'min', 'max', ...; one list, reduce_op.hpp).
//   out[d][v] = combine over relations (s, r, d) of  op_{e=(u->v) in r} w_e * x[s][u]
// A relation with no edge into v contributes the aggregation's empty value (0), as in
// PyG. Everything is recorded on the tape: gradients reach every x[s] (and nothing
// else), through the kernels' backward functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "edgewise/gnn/graph/hetero_graph.hpp"
#include "edgewise/gnn/message_passing/aggregate.hpp"

namespace edgewise::gnn {

// Per node type features, [num_nodes(type), C].
using NodeFeatureMap = std::map<std::string, Variable>;

struct HeteroAggregationOptions {
  AggregationOptions relation{};      // per relation: op (default sum), strategy, form, edge weights
  ReduceOp combine = ReduceOp::Sum;   // across the relations into one destination type
};

// One relation: x_src [num_src, C] -> [num_dst, C]. Throws std::invalid_argument
// naming x_src when its row count is not num_nodes(edge_type.src_type), or the edge
// type when the graph lacks it.
Variable aggregate_relation(const HeteroGraph& graph, const EdgeType& edge_type, const Variable& x_src,
                            const AggregationOptions& options = {});

// Elementwise `op` over K >= 1 Variables of one shape ([N, C] each -> [N, C]); with
// K == 1 the Variable itself (every op of one value is that value). Min / max
// gradients go to the winner (ties: the earlier part, the aggregation's rule).
Variable combine_elementwise(const std::vector<Variable>& parts, ReduceOp op);

// Every destination type with at least one incoming relation gets an entry. x must
// hold features for the source type of every relation, with num_nodes(type) rows;
// the relations into one destination type must give equal column counts. Throws
// std::invalid_argument naming the type (missing or wrongly shaped x) otherwise.
NodeFeatureMap hetero_aggregate(const HeteroGraph& graph, const NodeFeatureMap& x,
                                const HeteroAggregationOptions& options = {});

}  // namespace edgewise::gnn
