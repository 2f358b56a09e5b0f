// Canonical edge lists for the generators: optional self-loop removal and
// symmetrisation, sort by (source, destination), optional deduplication.
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::gnn {

struct EdgeListOptions {
  bool remove_self_loops = true;
  bool symmetrize = false;  // add (v, u) for each (u, v); a self loop is not doubled
  bool deduplicate = true;
};

// Edge (u, v) among num_nodes <= 2^32 nodes packed as u << node_bits(num_nodes) | v,
// so that key order is (source, destination) order.
int node_bits(int64_t num_nodes);
inline uint64_t edge_key(uint64_t u, uint64_t v, int bits) { return u << bits | v; }

// edge_index [2, E'] (sources then destinations) of the packed edges `keys`
// (consumed), sorted by (source, destination). Parallel (LSD radix sort); the
// result is the same for any thread count because it is fully sorted.
std::vector<int64_t> canonical_edge_index(int64_t num_nodes, std::vector<uint64_t> keys,
                                          const EdgeListOptions& options);

}  // namespace edgewise::gnn
