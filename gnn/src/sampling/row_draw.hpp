// One destination's draw of in-edges, shared by the hop samplers (HopSampler,
// HeteroHopSampler): the temporal and weight filters, then uniform or weighted draws
// with or without replacement, on Philox keyed by (seed, stream, node, draw).
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/sampling/hop_sampler.hpp"

namespace edgewise::gnn::sampling {

// What a row's positions carry. Null pointers: absent.
struct RowData {
  IdSpan row;                          // source id by position
  const double* weight = nullptr;      // sampling weight by position (weighted sampling)
  const int64_t* edge_time = nullptr;  // time by position ...
  const int64_t* node_time = nullptr;  // ... else by source id (temporal when either is set)
  TemporalStrategy strategy = TemporalStrategy::Uniform;

  bool temporal() const { return edge_time != nullptr || node_time != nullptr; }
  int64_t time_of(int64_t k) const { return edge_time != nullptr ? edge_time[k] : node_time[row[k]]; }
};

// Per-thread scratch of draw_row, kept between calls (in the samplers' scratch classes).
struct RowDrawScratch {
  std::vector<int64_t>& eligible;
  std::vector<int64_t>& order;
  std::vector<double>& keys;
  std::vector<uint64_t>& bitmap;  // all zero between calls (choose_positions)
};

// Sets `picked` to the positions of [first, last) that destination `node` (its local
// id) draws, `count` of them (HopSampler's contract, hop_sampler.hpp): temporal rows
// keep positions whose time is <= seed_time ('last': rows sorted by time, the newest
// eligible); weighted rows never draw a zero weight.
void draw_row(int64_t first, int64_t last, const RowData& data, int64_t seed_time, int64_t count, bool replace,
              uint64_t seed, uint64_t stream, uint32_t node, RowDrawScratch& scratch, std::vector<int64_t>& picked);

// A destination whose row is not sorted by time (the largest such), or -1 when every
// row is: what the 'last' strategy needs.
int64_t row_unsorted_by_time(const int64_t* colptr, int64_t num_dst, const RowData& data);

}  // namespace edgewise::gnn::sampling
