// Test data the engine's tests share: seeded random edge lists and small planted-
// partition node-classification tasks (one copy, instead of one per test file).
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::test {

// Edges as sorted (source, destination) pairs: edge sets compared whatever their order.
using EdgePairs = std::vector<std::pair<int64_t, int64_t>>;

inline EdgePairs sorted_pairs(const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  EdgePairs p;
  for (size_t k = 0; k < src.size(); ++k) p.emplace_back(src[k], dst[k]);
  std::sort(p.begin(), p.end());
  return p;
}

inline EdgePairs edges_of(const gnn::Graph& g) {
  auto [src, dst] = g.to(Device::cpu()).coo();
  return sorted_pairs(src, dst);
}

struct EdgeList {
  int64_t n = 0;
  std::vector<int64_t> src, dst;
};

// e directed edges, each endpoint uniform in [0, max_id] (default n - 1: nodes above
// max_id stay isolated), seeded; self loops and duplicates happen as they fall.
inline EdgeList random_edges(int64_t n, int64_t e, uint64_t seed, int64_t max_id = -1) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, max_id < 0 ? n - 1 : max_id);
  EdgeList g{n, {}, {}};
  g.src.reserve(static_cast<size_t>(e));
  g.dst.reserve(static_cast<size_t>(e));
  for (int64_t k = 0; k < e; ++k) {
    g.src.push_back(id(rng));
    g.dst.push_back(id(rng));
  }
  return g;
}

// A small planted-partition task (seed 3) prepared on `device`.
inline gnn::TrainData planted_task(Device device, int64_t nodes, int64_t valid, int64_t test,
                                   gnn::PlantedPartitionParams p = {}, gnn::PrepareOptions prepare = {}) {
  p.num_nodes = nodes;
  p.num_valid = valid;
  p.num_test = test;
  return gnn::prepare(gnn::planted_partition(p, 3), device, prepare);
}

}  // namespace edgewise::test
