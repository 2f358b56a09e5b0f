// Differentiable ops for attention layers (GAT, GATv2): the activations they use and the
// edge-level ops over a Graph — per-edge scores from the endpoints (sddmm), softmax over
// each node's incoming edges, and the attention-weighted multi-head aggregation. Every op
// records its backward on the tape and runs on the device of its arguments.
//
// Shapes: N nodes, E edges (CSR order of the Graph), H heads, D features per head; a
// [rows, H*D] tensor holds head h of a row at columns [h*D, (h+1)*D).
#pragma once

#include <cstdint>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// x > 0 ? x : negative_slope * x.
Variable leaky_relu(const Variable& x, float negative_slope = 0.01f);
// x > 0 ? x : alpha * (exp(x) - 1).
Variable elu(const Variable& x, float alpha = 1.0f);

// Per-head dot product with a learnable row: out[n, h] = sum_d x[n, h*D + d] * att[0, h*D + d]
// (x [N, H*D], att [1, H*D] -> [N, H]); GAT's a_src / a_dst projections.
Variable head_dot(const Variable& x, const Variable& att, int64_t heads);
// Mean over heads: [N, H*D] -> [N, D] (GAT's concat=false).
Variable head_mean(const Variable& x, int64_t heads);

// Additive sddmm: out[e, h] = a_src[src_e, h] + a_dst[dst_e, h]  ([N, H] each -> [E, H]).
// Also the GATv2 pre-activation with H = heads * D columns.
Variable edge_score_add(const Graph& graph, const Variable& a_src, const Variable& a_dst);
// Softmax of scores [E, H] over each destination's incoming edges, per head.
Variable edge_softmax(const Graph& graph, const Variable& scores);
// out[v, h*D + d] = sum over edges e -> v of alpha[e, h] * x[src_e, h*D + d]
// (alpha [E, H], x [N, H*D] -> [N, H*D]); gradients for both.
Variable attention_aggregate(const Graph& graph, const Variable& alpha, const Variable& x);

}  // namespace edgewise::gnn
