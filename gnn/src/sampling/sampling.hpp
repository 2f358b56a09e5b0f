// Pieces the samplers share: seed validation, relabelling to local ids, building a
// Block and a MiniBatch from host arrays.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgewise/gnn/sampling/neighbor_sampler.hpp"

namespace edgewise::gnn::sampling {

// A host CSR (by destination) whose rows list their sources in ascending id (stable:
// parallel edges keep their order), with each entry's CSR position in the graph.
// Samplers take positions in ascending order, so their sampled ids come out ascending
// per destination, which the relabelling's galloping search wants. Datasets usually
// come with sorted rows; then nothing is copied.
struct SortedRows {
  Graph host;  // the graph on the host
  std::vector<int32_t> own_sources;    // when the graph's rows were not sorted
  std::vector<int64_t> own_positions;
  const int64_t* offsets() const { return host.offsets().data(); }
  const int32_t* sources() const { return own_positions.empty() ? host.sources().data() : own_sources.data(); }
  // The CSR position in `host` of sorted entry k.
  int64_t position(int64_t k) const { return own_positions.empty() ? k : own_positions[k]; }
};
SortedRows sorted_rows(const Graph& graph);

// The seeds as int32 after checking each lies in [0, N) and none repeats; throws
// std::invalid_argument "<op>: <name>[i] (v) ..." naming the first bad position.
std::vector<int32_t> checked_seeds(std::span<const int64_t> seeds, int64_t num_nodes, const char* op,
                                   const char* name = "seed_nodes");

// Local ids of one block. dst [m] distinct global ids; sampled [E] global source ids,
// the sources of destination i at [offsets[i], offsets[i+1]) in nondecreasing order.
// src_nodes: dst in order, then every other sampled id once, ascending.
// local_sources[e]: the position of sampled[e] in src_nodes.
// Sort + unique with the kernels (sort_by_key, run_length_encode), then one
// galloping_search per destination over the sorted unique ids.
struct Relabelled {
  std::vector<int32_t> src_nodes;
  std::vector<int32_t> local_sources;
};
Relabelled relabel(std::span<const int32_t> dst, std::span<const int64_t> offsets, std::span<const uint32_t> sampled);

// A Block on `device`: edges of local destination i at [dst_offsets[i], dst_offsets[i+1])
// (dst_offsets [num_dst + 1]), rows num_dst..num_src-1 empty; weights optional.
Block make_block(const Relabelled& ids, int64_t num_dst, std::span<const int64_t> dst_offsets,
                 std::span<const int64_t> edge_ids, std::span<const float> weights, Device device);

// The MiniBatch of `blocks` (outermost first) for these seeds.
MiniBatch assemble(std::vector<Block> blocks, std::span<const int32_t> seeds, Device device);

// Chooses k of the positions [0, d) of `node`'s row uniformly without replacement
// (Floyd: for j = d-k .. d-1 draw t in [0, j], take t unless already taken, else j —
// every k-subset equally likely) and writes them ascending to out[0, k). Draws are
// Philox (seed, stream, node, step) (sampling_core.hpp). `bitmap` is per-thread
// scratch, all zero on entry and on exit.
void choose_positions(uint64_t seed, uint64_t stream, uint32_t node, int64_t d, int64_t k, int64_t* out,
                      std::vector<uint64_t>& bitmap);

// Host copies of int32 ids as an int64 [n, 1] tensor on `device`.
IndexTensor index_tensor(std::span<const int32_t> ids, Device device);

}  // namespace edgewise::gnn::sampling
