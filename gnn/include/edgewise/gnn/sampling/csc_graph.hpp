// CscGraph: an owned compressed-sparse-column graph built from an edge list, the
// form HopSampler reads (hop_sampler.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgewise/gnn/sampling/hop_sampler.hpp"

namespace edgewise::gnn {

struct CscGraph {
  std::vector<int64_t> colptr;       // [N + 1]
  // The source and input position of each CSC position, in 32 bits (row32, edge_id32)
  // where every node id and edge position fits, else in 64 (row, edge_id); the other
  // pair stays empty. view() hands out whichever is filled.
  std::vector<int64_t> row;          // [E]
  std::vector<int64_t> edge_id;      // [E]
  std::vector<int32_t> row32;        // [E]
  std::vector<int32_t> edge_id32;    // [E]
  std::vector<double> edge_weight;   // [E] or empty
  std::vector<int64_t> edge_time;    // [E] or empty
  std::vector<int64_t> node_time;    // [N] or empty

  CscView view() const {
    return {colptr,      row32.empty() ? IdSpan(row) : IdSpan(row32),
            edge_id32.empty() ? IdSpan(edge_id) : IdSpan(edge_id32),
            edge_weight, edge_time, node_time};
  }

  // Ids that fit in 32 bits (every node id and position below 2^31).
  static bool fits_narrow_ids(int64_t num_nodes, int64_t num_edges) noexcept {
    return num_nodes <= INT32_MAX && num_edges <= INT32_MAX;
  }
  // Moves row / edge_id into row32 / edge_id32 where fits_narrow_ids (for a graph
  // whose 64-bit arrays were filled directly).
  void narrow_ids();

  // Edges src[k] -> dst[k] (k < E) over num_nodes nodes, grouped by destination.
  // Within a destination the edges keep their input order, or ascend in time (the
  // edge's, else its source's; ties in input order) when sort_by_time — what the
  // 'last' temporal strategy needs. edge_weight / edge_time are per input edge,
  // node_time per node (empty: absent). Ids are kept in 32 bits where they fit
  // (wide_ids: always 64). Throws std::invalid_argument naming
  // edge_index[0][k] / edge_index[1][k] out of [0, num_nodes), or a length mismatch.
  static CscGraph from_coo(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes,
                           std::span<const double> edge_weight = {}, std::span<const int64_t> edge_time = {},
                           std::span<const int64_t> node_time = {}, bool sort_by_time = false,
                           bool wide_ids = false);
};

}  // namespace edgewise::gnn
