// Edge features of a Graph: attaching them (input order -> CSR order) and the
// features of added self loops.
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// The features for `graph` plus one self loop per node of `loop_nodes`, in the COO
// order with_self_loops builds from: graph's edges in CSR order, then the loops in the
// order given. A loop's row is the mean of its node's incoming edges' rows (0 without
// any). Host tensor [E + loop_nodes.size(), D]; graph must have edge features.
Tensor edge_attr_with_mean_loops(const Graph& graph, const std::vector<int64_t>& loop_nodes);

}  // namespace edgewise::gnn
