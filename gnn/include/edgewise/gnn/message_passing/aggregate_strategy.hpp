// The measured Auto: how aggregate() resolves AggregationStrategy::Auto and
// MessageForm::Auto for a graph, from measurements on the running machine.
//
// Candidates (aggregate()'s forward):
//   Fused        + Segment  spmm over the CSR: gather and reduce in one pass.
//   Materialized + Segment  gather w_e * x[src_e] into [E, C], then segment_reduce.
//   Materialized + Scatter  the same gather, then scatter_reduce by destination
//                           (atomics; not bitwise reproducible on CUDA).
// (A Fused form has no Scatter variant: Scatter always materialises.)
//
// Cost model. Each candidate costs t = a * E + b * N (N nodes, E edges) from three
// measured parts — fused spmm, the gather, the segment / scatter reduction — each
// with its own (a, b). The constants are fitted per (device, feature width C,
// reduction kind: sum-like or min/max with arg) by calibrate_aggregation(): every
// part timed (minimum of 5 after a warm-up) on two synthetic power-law graphs with
// the same N and average in-degree 2 and 32, then a = slope in E, b = what is left
// per node (both clamped at >= 0). The graphs are sized so that the [E, C]
// messages stay <= 16 MiB, so one calibration takes a few ms to tens of ms on a
// CPU; the result is kept for the process (one per key; thread-safe). Auto keeps
// the reproducible Segment path (Fused when the form allows) unless another
// candidate is predicted faster by more than kAutoSwitchMargin for the graph's
// (N, E): a two-graph fit on a busy machine is noisy, and a default that flips
// between runs would cost reproducibility for a few percent.
//
// Requests win over the model: an explicit strategy (Segment / Scatter) fixes the
// strategy; determinism (options.deterministic or set_deterministic) removes
// Scatter from Auto's candidates. The model is consulted only when the form is
// MessageForm::Auto (opt-in: --form auto). With a fixed form (the default options
// say Fused) Auto stays the CSR Segment path: on a loaded host the calibrated
// constants vary by up to 100x between runs (measured here, below), and a default
// whose choice — and so whose float summation order — flips between processes
// would break run-to-run reproducibility. Making Auto the default form is a
// one-line change in AggregationOptions once calibrations are stable.
//
// Benchmark mode (opt-in, like cuDNN's benchmark flag): set_aggregation_benchmark(true)
// or EDGEWISE_AGGREGATION_BENCHMARK=1 in the environment (read once). Then the first
// aggregate() for each (graph id, C, op, device, constraints) runs every allowed
// candidate once untimed, then twice timed on the real inputs, and keeps the fastest;
// later calls reuse it.
//
// Measured crossovers (edgewise-bench --filter '^aggregate-auto/'; idle 2-core Intel
// Xeon, AVX-512, float, power-law in-degrees, N = 100K; each candidate the median of
// 10 runs): Fused + Segment is the fastest candidate at every point measured — sum and
// max-with-arg, C = 16 and 64, average in-degree 2, 10 and 32 — by 2.5-8x for sum and
// 1.8-3.7x for max (the materialised forms write and re-read [E, C]; Scatter adds the
// partials' merge). So on this CPU there is no crossover, and the calibrated model
// (whose fits come from N <= 16K graphs) predicts Fused + Segment at every such point
// too. The model does follow the kernels: before max-with-arg folded by compare and
// select (a branch per element), fused max at C = 16 ran 3.9 / 16.7 / 50.9 ms at degree
// 2 / 10 / 32 against Materialized + Scatter's 5.3 / 16.0 / 45.0 ms — a real crossover
// at degree ~10 — and the model switched to Scatter at degree 10 and 32. On a loaded
// host (load average ~15) the fitted constants varied up to 100x between runs; that is
// why the margin exists and why Auto with a fixed form (the default) stays on the
// reproducible CSR path. The model is meant for devices where the balance differs (GPU
// atomics, coalesced gathers), and benchmark mode for graphs where its fit is off.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "edgewise/gnn/message_passing/aggregate.hpp"

namespace edgewise::gnn {

// A candidate must be predicted this many times faster than the current pick to replace it.
inline constexpr double kAutoSwitchMargin = 1.25;

struct AggregationChoice {
  AggregationStrategy strategy = AggregationStrategy::Segment;  // Segment or Scatter (never Auto)
  MessageForm form = MessageForm::Fused;                         // Fused or Materialized (never Auto)
  bool operator==(const AggregationChoice&) const = default;
};
std::string to_string(const AggregationChoice& choice);  // e.g. "fused/segment"

// Cost of one part, in ns: a_per_edge * E + b_per_node * N.
struct PartCost {
  double per_edge_ns = 0;
  double per_node_ns = 0;
  double at(int64_t num_nodes, int64_t num_edges) const {
    return per_edge_ns * static_cast<double>(num_edges) + per_node_ns * static_cast<double>(num_nodes);
  }
};

struct AggregationCostModel {
  PartCost fused;    // spmm
  PartCost gather;   // w_e * x[src_e] -> [E, C]
  PartCost segment;  // segment_reduce of [E, C] messages
  PartCost scatter;  // scatter_reduce of [E, C] messages
  double calibration_ms = 0;  // wall time the calibration took
  // Predicted ns of a candidate on a graph of N nodes and E edges.
  double predict(const AggregationChoice& choice, int64_t num_nodes, int64_t num_edges) const;
};

// Measures the model on `device` for width C and `op`'s kind (sum-like or with arg);
// no caching (calibrated_cost_model caches). Throws std::invalid_argument for C < 1.
AggregationCostModel calibrate_aggregation(Device device, int64_t width, ReduceOp op);
// The model for (device, C, op kind), calibrated on first use and kept for the process.
const AggregationCostModel& calibrated_cost_model(Device device, int64_t width, ReduceOp op);

// Benchmark mode (see above).
void set_aggregation_benchmark(bool on) noexcept;
bool aggregation_benchmark() noexcept;

// The candidate aggregate() runs for these inputs: x [N, C] on the graph's device,
// `weights` the edge weights it will use ([E] in CSR order, or absent).
AggregationChoice choose_aggregation(const Graph& graph, MatrixView<const float> x, VectorView<const float> weights,
                                     const AggregationOptions& options);
// The strategy aggregate_messages() uses for [E, C] messages (Segment or Scatter; the model only).
AggregationStrategy choose_message_reduction(const Graph& graph, int64_t width, const AggregationOptions& options);

// The winner benchmark mode stored for (graph id, C, op) on `device`, if any.
std::optional<AggregationChoice> benchmarked_choice(uint64_t graph_id, int64_t width, ReduceOp op, Device device);
// Forgets calibrations and benchmark winners (tests; after changing the machine's load).
void clear_aggregation_caches();

}  // namespace edgewise::gnn
