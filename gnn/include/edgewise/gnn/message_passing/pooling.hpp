// Global pooling (readout) for graph-level tasks: one row per graph, any reduction
// of the list (sum, mean, min, max, mul, var, std) over that graph's node rows,
// through segment_reduce on the graph offsets of a GraphBatch; recorded on the tape
// with the kernels' segment_reduce_backward, which gives every op its own gradient
// (edgewise/kernels/reduce_backward.hpp), e.g.
//   sum   d x[i] = d out[g(i)]
//   mean  d x[i] = d out[g(i)] / n_g
//   max   d x[i, c] = d out[g, c] for the winning row of each (g, c) (ties: the
//         lower row, as segment_reduce picks it), 0 elsewhere;
//   var   d x[i] = d out[g(i)] * 2 (x[i] - mean_g) / n_g.
// A graph without nodes pools to the op's empty value and passes no gradient.
#pragma once

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::gnn {

// x [N, C], graph_offsets [B + 1, 1] (offsets[0] == 0, nondecreasing, offsets[B] == N)
// -> [B, C], any ReduceOp. Throws std::invalid_argument naming
// the argument on a shape or device mismatch or bad offsets.
Variable global_pool(const Variable& x, const IndexTensor& graph_offsets, ReduceOp op);

inline Variable global_add_pool(const Variable& x, const IndexTensor& graph_offsets) {
  return global_pool(x, graph_offsets, ReduceOp::Sum);
}
inline Variable global_mean_pool(const Variable& x, const IndexTensor& graph_offsets) {
  return global_pool(x, graph_offsets, ReduceOp::Mean);
}
inline Variable global_max_pool(const Variable& x, const IndexTensor& graph_offsets) {
  return global_pool(x, graph_offsets, ReduceOp::Max);
}

}  // namespace edgewise::gnn
