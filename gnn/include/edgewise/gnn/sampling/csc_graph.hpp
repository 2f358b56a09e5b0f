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
  std::vector<int64_t> row;          // [E] source of each position
  std::vector<int64_t> edge_id;      // [E] input position of each position
  std::vector<double> edge_weight;   // [E] or empty
  std::vector<int64_t> edge_time;    // [E] or empty
  std::vector<int64_t> node_time;    // [N] or empty

  CscView view() const {
    return {colptr, row, edge_id, edge_weight, edge_time, node_time};
  }

  // Edges src[k] -> dst[k] (k < E) over num_nodes nodes, grouped by destination.
  // Within a destination the edges keep their input order, or ascend in time (the
  // edge's, else its source's; ties in input order) when sort_by_time — what the
  // 'last' temporal strategy needs. edge_weight / edge_time are per input edge,
  // node_time per node (empty: absent). Throws std::invalid_argument naming
  // edge_index[0][k] / edge_index[1][k] out of [0, num_nodes), or a length mismatch.
  static CscGraph from_coo(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes,
                           std::span<const double> edge_weight = {}, std::span<const int64_t> edge_time = {},
                           std::span<const int64_t> node_time = {}, bool sort_by_time = false);
};

}  // namespace edgewise::gnn
