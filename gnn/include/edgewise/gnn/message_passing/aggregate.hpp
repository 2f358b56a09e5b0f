// Aggregation: the edge -> node reduction every message-passing layer uses,
//   out[v] = op over edges e = (u -> v) of w_e * x[u]     (op: any of reduce_op.hpp)
// with forward and backward on the tape.
//
// Strategies (the mission's central choice):
//  Segment  CSR, no atomics: every output row has one writer and a fixed order, so
//           the result is bitwise reproducible. Needs the CSR (a Graph has it).
//  Scatter  one atomic per message into out[dst_e] (scatter_reduce): no sorting or
//           preprocessing; on the GPU not bitwise reproducible for float sums.
//  Auto     Segment (reproducible; the CSR's one sort is paid once per graph) when
//           the form is fixed, as in the default options; with MessageForm::Auto a
//           cost model measured on the running machine picks strategy and form
//           (aggregate_strategy.hpp: the model, its calibration, the opt-in
//           benchmark mode, the measurements); only Segment candidates when
//           determinism is requested (options or set_deterministic).
// Forms: Fused (spmm: gather and reduce in one pass, the [E, C] message matrix never
// exists) or Materialized (gather w_e * x[src_e] into [E, C], then segment_reduce or
// scatter_reduce). Fused is the default; Materialized exists for comparison (memory,
// speed) and for user-supplied per-edge messages (aggregate_messages); Auto lets the
// measured cost model choose the form too.
// Backward: sum/mean through the transposed CSR (spmm_backward), min/max routed
// through the forward's arg (spmm_arg_backward), mul/var/std from the forward's
// output (spmm_full_backward; segment_reduce_backward for per-edge messages);
// dL/d edge weights when they require grad.
#pragma once

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::gnn {

enum class AggregationStrategy { Auto, Segment, Scatter };
enum class MessageForm { Fused, Materialized, Auto };

struct AggregationOptions {
  ReduceOp op = ReduceOp::Sum;
  AggregationStrategy strategy = AggregationStrategy::Auto;
  MessageForm form = MessageForm::Fused;
  bool use_edge_weight = true;  // multiply messages by the graph's edge weights
  bool deterministic = false;   // force a bitwise-reproducible path
};

// Process-wide determinism switch (like torch.use_deterministic_algorithms):
// Auto picks only reproducible paths, and an explicit Scatter on a GPU is an error.
void set_deterministic(bool on) noexcept;
bool deterministic() noexcept;

// The strategy when no graph is at hand: Segment for Auto (aggregate() itself asks the
// measured model, choose_aggregation in aggregate_strategy.hpp).
AggregationStrategy resolve_strategy(const AggregationOptions& options, Device device);

// Aggregates node features x [N, C] over the graph's edges. `edge_weight`, when
// given, overrides the graph's weights ([E, 1] in CSR order) and may require grad.
Variable aggregate(const Graph& graph, const Variable& x, const AggregationOptions& options = {},
                   const Variable& edge_weight = Variable());

// Aggregates per-edge messages [E, C] given in CSR order (message form).
Variable aggregate_messages(const Graph& graph, const Variable& messages, const AggregationOptions& options = {});

// The string names used by flags and Python: "auto", "segment", "scatter".
AggregationStrategy parse_strategy(const std::string& name);

}  // namespace edgewise::gnn
