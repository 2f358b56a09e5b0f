// Per-edge messages for layers whose messages depend on the edge (GINEConv): node
// features gathered onto the edges of a Graph, in its CSR order, differentiable.
#pragma once

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// out[k] = x[sources()[k]] for every CSR edge k: x [N, C] -> [E, C] (an isolated node
// has no rows). Backward: grad_x[u] = sum of grad_out over u's outgoing edges, a
// gather over the transposed CSR (no atomics, reproducible). x on the graph's device.
Variable gather_sources(const Graph& graph, const Variable& x);

}  // namespace edgewise::gnn
