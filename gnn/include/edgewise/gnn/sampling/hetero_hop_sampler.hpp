// Hop-wise neighbour sampling of a graph with several node and edge types, with the
// semantics and output layout of pyg-lib's hetero_neighbor_sample (what PyG's
// NeighborLoader calls on HeteroData): per hop, every edge type draws its own fanout
// for each destination-type node found by the hops before; new nodes get local ids of
// their own type in discovery order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/sampling/hop_sampler.hpp"

namespace edgewise::gnn {


// One edge type, grouped by destination: the in-edges of destination v are the
// positions [colptr[v], colptr[v + 1]); rows()[k] is the source (an id of the source
// type), ids()[k] the input position of that edge, both kept in 32 bits (row32,
// edge_id32) where every id fits and in 64 (row, edge_id) otherwise, the other pair
// empty, as CscGraph keeps them. Optional, by position (empty: absent): edge_weight
// (weighted sampling) and edge_time (temporal sampling).
struct HeteroRelation {
  int64_t src_type = 0;
  int64_t dst_type = 0;
  std::vector<int64_t> colptr;       // [num_dst + 1]
  std::vector<int64_t> row;          // [E]
  std::vector<int64_t> edge_id;      // [E]
  std::vector<int32_t> row32;        // [E]
  std::vector<int32_t> edge_id32;    // [E]
  std::vector<double> edge_weight;   // [E] or empty
  std::vector<int64_t> edge_time;    // [E] or empty

  IdSpan rows() const { return row32.empty() ? IdSpan(row) : IdSpan(row32); }
  IdSpan ids() const { return edge_id32.empty() ? IdSpan(edge_id) : IdSpan(edge_id32); }

  // Edges src[k] -> dst[k], kept in input order within each destination; weight and
  // time (input order, empty: absent) follow their edges. Throws
  // std::invalid_argument naming `name`'s edge_index[0][k] / [1][k] out of
  // [0, num_src) / [0, num_dst), src and dst of different lengths, or a weight / time
  // of another length.
  static HeteroRelation from_coo(const std::string& name, int64_t src_type, int64_t dst_type,
                                 std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_src,
                                 int64_t num_dst, std::span<const double> weight = {},
                                 std::span<const int64_t> time = {});

  // Orders each destination's in-edges by time, stably: edge_time, else
  // src_node_time of the source (what temporal_strategy 'last' needs).
  void sort_rows_by_time(std::span<const int64_t> src_node_time);
};

struct HeteroHopSamplerOptions {
  bool replace = false;
  // Each seed grows its own subgraph (batch ids per node type in the output).
  bool disjoint = false;
  TemporalStrategy temporal_strategy = TemporalStrategy::Uniform;
  // Per node type, the time of each node ([num_nodes[t]]; an empty list: that type has
  // none); empty: no node times. A neighbour is eligible when its time (its edge's
  // edge_time, else its node time) is <= its seed's; relations with neither are not
  // filtered. Temporal sampling needs disjoint subgraphs.
  std::vector<std::vector<int64_t>> node_time;
  // false: the nodes are drawn as usual, and the sample holds every edge of every edge
  // type among them (PyG's subgraph_type="induced"), not the drawn ones. Not with disjoint.
  bool directed = true;
};

// The sample in PyG's layout (torch_geometric.sampler.HeteroSamplerOutput).
struct HeteroSampledSubgraph {
  std::vector<std::vector<int64_t>> node;               // per node type: global ids, seeds first
  std::vector<std::vector<int64_t>> batch;              // disjoint: per node type, the seed each node grew from
  std::vector<std::vector<int64_t>> row;                // per edge type: local id of each edge's source
  std::vector<std::vector<int64_t>> col;                // per edge type: local id of its destination
  std::vector<std::vector<int64_t>> edge;               // per edge type: its input position
  std::vector<std::vector<int64_t>> num_sampled_nodes;  // per node type [hops + 1]
  std::vector<std::vector<int64_t>> num_sampled_edges;  // per edge type [hops]
};

// Per-thread scratch kept between calls: one node -> local id table per node type,
// reset after each call by touching only the entries it set.
class HeteroHopSamplerScratch {
 public:
  HeteroHopSamplerScratch() = default;

 private:
  friend class HeteroHopSampler;
  std::vector<std::vector<int32_t>> local_of_;
  std::vector<std::vector<uint64_t>> hash_keys_;  // disjoint: (seed, node) -> local id per node type
  std::vector<std::vector<int32_t>> hash_values_;
  std::vector<int64_t> picked_, eligible_, order_;
  std::vector<double> keys_;
  std::vector<uint64_t> bitmap_;
};

// Draws as HopSampler does (hop_sampler.hpp; weighted, temporal and disjoint the same
// way): count < 0, or count >= degree without replacement, takes every in-edge in
// order; with replacement `count` uniform draws; without, `count` distinct positions
// (Floyd), ascending. Philox keyed by (seed, (stream * R + edge type) * 64 + hop,
// destination's local id, draw): a sample is a pure function of (graph, options,
// seeds, seed times, seed, stream).
class HeteroHopSampler {
 public:
  // num_nodes per node type; num_neighbors per edge type (in `relations` order), per
  // hop: every edge type names the same number of hops (1..64), entries >= -1.
  // Throws std::invalid_argument naming the field (relation types outside the node
  // types, mismatched hop counts, colptr / row / edge_id inconsistent).
  // Also: weights finite and >= 0, times of the right lengths, temporal without
  // disjoint, 'last' with a row not sorted by time.
  HeteroHopSampler(std::vector<int64_t> num_nodes, std::vector<HeteroRelation> relations,
                   std::vector<std::vector<int64_t>> num_neighbors, HeteroHopSamplerOptions options);
  HeteroHopSampler(std::vector<int64_t> num_nodes, std::vector<HeteroRelation> relations,
                   std::vector<std::vector<int64_t>> num_neighbors, bool replace)
      : HeteroHopSampler(std::move(num_nodes), std::move(relations), std::move(num_neighbors),
                         HeteroHopSamplerOptions{replace, false, TemporalStrategy::Uniform, {}}) {}

  // seeds per node type (empty spans for types without seeds): ids in
  // [0, num_nodes[type]), distinct unless disjoint. Disjoint: seed b is the b-th in
  // type order (the first type's seeds first). seed_time (temporal only): per node
  // type, one time per seed, or empty for the node times of the seeds. Throws
  // std::invalid_argument naming the first bad seed or time.
  HeteroSampledSubgraph sample(const std::vector<std::span<const int64_t>>& seeds,
                               const std::vector<std::span<const int64_t>>& seed_time, uint64_t seed,
                               uint64_t stream, HeteroHopSamplerScratch& scratch) const;
  HeteroSampledSubgraph sample(const std::vector<std::span<const int64_t>>& seeds, uint64_t seed, uint64_t stream,
                               HeteroHopSamplerScratch& scratch) const {
    return sample(seeds, {}, seed, stream, scratch);
  }

  int64_t num_node_types() const noexcept { return static_cast<int64_t>(num_nodes_.size()); }
  int64_t num_edge_types() const noexcept { return static_cast<int64_t>(relations_.size()); }
  int64_t num_hops() const noexcept { return num_hops_; }
  const HeteroRelation& relation(int64_t r) const { return relations_.at(static_cast<size_t>(r)); }

 private:
  std::vector<int64_t> num_nodes_;
  std::vector<HeteroRelation> relations_;
  std::vector<std::vector<int64_t>> num_neighbors_;
  HeteroHopSamplerOptions options_;
  bool temporal_ = false;  // some relation has times
  int64_t num_hops_ = 0;
};

}  // namespace edgewise::gnn
