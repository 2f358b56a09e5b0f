// Hop-wise neighbour sampling with the semantics and output layout of pyg-lib's
// neighbor_sample (what PyG's NeighborLoader calls): seeds first, then the nodes each
// hop discovers, edges grouped by hop, relabelled to local ids in discovery order.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/sampling/id_span.hpp"

namespace edgewise::gnn {

// A graph in compressed sparse column form, borrowed: the in-edges of node v are the
// CSC positions [colptr[v], colptr[v + 1]), row[k] is the source of position k (32- or
// 64-bit ids, IdSpan). Optional per-position data (empty span: absent):
//   edge_id [E]      the id reported for position k (default: k), 32 or 64 bits;
//   edge_weight [E]  sampling weight, finite and >= 0 (weighted sampling);
//   edge_time [E]    timestamp of the edge (temporal sampling).
// node_time [N]      timestamp of each node (temporal sampling).
struct CscView {
  std::span<const int64_t> colptr;
  IdSpan row;
  IdSpan edge_id;
  std::span<const double> edge_weight;
  std::span<const int64_t> edge_time;
  std::span<const int64_t> node_time;
  int64_t num_nodes() const { return colptr.empty() ? 0 : static_cast<int64_t>(colptr.size()) - 1; }
  int64_t num_edges() const { return static_cast<int64_t>(row.size()); }
  bool temporal() const { return !edge_time.empty() || !node_time.empty(); }
};

enum class TemporalStrategy { Uniform, Last };

struct HopSamplerOptions {
  // Neighbours per node for each hop, counted from the seeds (PyG's num_neighbors):
  // >= 0, or -1 for every in-neighbour. At most 64 hops.
  std::vector<int64_t> num_neighbors;
  bool replace = false;  // draw with replacement (exactly `count` draws per node)
  // false: every edge among the sampled nodes (PyG's subgraph_type="induced").
  bool directed = true;
  // Each seed grows its own subgraph: a node reached from two seeds appears twice.
  bool disjoint = false;
  // Temporal: a neighbour is eligible when its time (edge_time, else node_time of the
  // source) is <= the seed's time. Uniform: drawn among the eligible; Last: the
  // `count` eligible positions of largest time (rows must be sorted by time).
  TemporalStrategy temporal_strategy = TemporalStrategy::Uniform;
};

// The sample in PyG's layout (torch_geometric.sampler.SamplerOutput).
struct SampledSubgraph {
  std::vector<int64_t> node;   // [n] global id of each local node: seeds, then hop 1's new nodes, ...
  std::vector<int64_t> batch;  // [n] disjoint only: the seed (index in the seed list) each node grew from
  std::vector<int64_t> row;    // [m] local source of each sampled edge
  std::vector<int64_t> col;    // [m] local destination
  std::vector<int64_t> edge;   // [m] edge id (CscView::edge_id, else the CSC position)
  std::vector<int64_t> num_sampled_nodes;  // [hops + 1]: seeds, then the new nodes of each hop
  // [hops]: the edges sampled at each hop (directed). Induced: edges are grouped by
  // destination, entry h counting those into the nodes of num_sampled_nodes[h] (the
  // last also those into the last hop's new nodes).
  std::vector<int64_t> num_sampled_edges;
};

// What HopSampler::sample throws when its scratch's cancel flag is set mid-call.
struct SamplingCancelled : std::exception {
  const char* what() const noexcept override { return "sampling cancelled"; }
};

// Per-thread scratch kept between calls: a node -> local id table over all nodes,
// reset after each call by touching only the entries it set.
class HopSamplerScratch {
 public:
  HopSamplerScratch() = default;

  // A flag another thread may set to end a sample() in progress: it is read at each
  // hop and every few thousand nodes of one, and sample() then throws
  // SamplingCancelled (the scratch stays usable). nullptr: never cancelled.
  void set_cancel_flag(const std::atomic<bool>* flag) noexcept { cancel_ = flag; }
  bool cancelled() const noexcept { return cancel_ != nullptr && cancel_->load(std::memory_order_relaxed); }

 private:
  friend class HopSampler;
  const std::atomic<bool>* cancel_ = nullptr;
  std::vector<int32_t> local_of_;  // [N], -1 where unmapped
  std::vector<uint64_t> hash_keys_;  // disjoint: (seed index, node) -> local id
  std::vector<int32_t> hash_values_;
  std::vector<int64_t> positions_;
  std::vector<int64_t> hop_positions_, hop_offsets_, hop_sources_, order_, eligible_;
  std::vector<double> keys_;
  std::vector<uint64_t> bitmap_;
};

// Samples subgraphs of one graph. Validation happens once, in the constructor; sample()
// is const and may run on several threads at once, each with its own scratch.
//
// Randomness: Philox keyed by (seed, stream * 64 + hop, local destination, draw), so
// a sample is a pure function of (graph, options, seeds, seed_time, seed, stream):
// the same on any thread, in any order of calls.
//
// Per destination of row population d (eligible positions) and count c:
//   c < 0, or c >= d without replacement: every eligible position, in row order;
//   with replacement: c uniform (weighted: proportional) draws, in draw order;
//   without: c distinct positions, uniform over c-subsets (Floyd), ascending;
//     weighted: Efraimidis-Spirakis keys u^(1/w) (the c largest; zero weights never
//     drawn, so fewer than c when fewer positive weights remain), ascending.
class HopSampler {
 public:
  // Throws std::invalid_argument naming the field: colptr not [N + 1] nondecreasing
  // from 0 to E, row entries outside [0, N), optional arrays of the wrong length,
  // weights negative or NaN, num_neighbors empty / more than 64 / an entry < -1,
  // temporal without disjoint, Last with a row not sorted by time, induced with
  // disjoint.
  HopSampler(CscView graph, HopSamplerOptions options);

  // seeds: node ids in [0, N) (distinct unless disjoint); seed_time [B] (temporal
  // only; empty: node_time of each seed). Throws std::invalid_argument naming the
  // first bad seed before sampling anything.
  SampledSubgraph sample(std::span<const int64_t> seeds, std::span<const int64_t> seed_time, uint64_t seed,
                         uint64_t stream, HopSamplerScratch& scratch) const;

  const CscView& graph() const noexcept { return graph_; }
  const HopSamplerOptions& options() const noexcept { return options_; }

  // The seeds' checks alone (what sample() throws first).
  void check_seeds(std::span<const int64_t> seeds, std::span<const int64_t> seed_time) const;

 private:
  CscView graph_;
  HopSamplerOptions options_;
};

// "uniform" / "last" (std::invalid_argument naming temporal_strategy otherwise).
TemporalStrategy parse_temporal_strategy(const std::string& name);

}  // namespace edgewise::gnn
