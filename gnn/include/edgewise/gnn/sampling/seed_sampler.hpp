// SeedSampler: seed nodes drawn in proportion to updatable priorities on a
// SegmentTree (loss- or degree-prioritised minibatches), with unbiased importance weights.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::gnn {

struct SeedSamplerOptions {
  // One draw per equal-mass stratum of the total priority (SegmentTree's stratified
  // draws, as prioritized experience replay does): still E[draws of i] = B p_i, so the
  // weights below stay unbiased, with less variance than independent draws.
  bool stratified = true;
  Device device = Device::cpu();  // where the SegmentTree lives
};

// A batch of seeds drawn with replacement, merged into distinct nodes.
//
// Sizes: B draws, U distinct nodes (U <= B), P = population (nodes with priority > 0).
// nodes   [U] distinct drawn ids, ascending (ready for NeighborSampler::sample).
// counts  [U] draws of each node (they sum to B).
// weights [U] counts[i] / (B * P * p_i), p_i = priority_i / total: then
//             sum_i weights[i] * f(nodes[i]) is an unbiased estimate of the population
//             mean (1 / P) * sum_{j in population} f(j) — e.g. of the training loss.
//             With uniform priorities every draw weighs 1 / B (the plain batch mean).
// draws   [B] the raw draws in draw order.
struct SeedBatch {
  std::vector<int64_t> nodes;
  std::vector<int64_t> counts;
  std::vector<float> weights;
  std::vector<int64_t> draws;
};

// A SegmentTree over N per-node priorities; node i is drawn with probability
// priority_i / total. A node of priority 0 is never drawn (nodes outside the
// training set, say). Draws are counter-based (SegmentTree::sample keyed by `seed`),
// so a batch is a pure function of (priorities, batch_size, seed) on every device.
class SeedSampler {
 public:
  // priorities [N]: finite and >= 0. Throws std::invalid_argument naming the first bad one.
  explicit SeedSampler(std::span<const float> priorities, SeedSamplerOptions options = {});
  // Priority 1 on each of `nodes` (ids in [0, num_nodes), repeats allowed), 0 elsewhere.
  static SeedSampler uniform(int64_t num_nodes, std::span<const int64_t> nodes, SeedSamplerOptions options = {});
  // Priority (1 + in-degree)^power on each of `nodes`, 0 elsewhere (power 1: hubs
  // proportionally more often; power 0: uniform).
  static SeedSampler by_degree(const Graph& graph, std::span<const int64_t> nodes, float power = 1.0f,
                               SeedSamplerOptions options = {});

  // Draws batch_size seeds. batch_size must lie in [0, population()]: a batch with
  // more draws than candidate nodes can only be duplicates (std::invalid_argument).
  SeedBatch sample(int64_t batch_size, uint64_t seed) const;

  // Sets priority[nodes[k]] = values[k] (a repeated node takes its last value), e.g.
  // per-node losses after a step. nodes in [0, N), values finite and >= 0, equal
  // lengths; checked before anything changes (bad input leaves the sampler as it was).
  void update_priorities(std::span<const int64_t> nodes, std::span<const float> values);

  int64_t num_nodes() const noexcept { return static_cast<int64_t>(priorities_.size()); }
  int64_t population() const noexcept { return population_; }  // nodes with priority > 0
  const std::vector<float>& priorities() const noexcept { return priorities_; }  // host mirror
  float total() const { return tree_.total(engine_context(tree_.device())); }
  const SegmentTree& tree() const noexcept { return tree_; }

 private:
  SeedSamplerOptions options_;
  SegmentTree tree_;
  std::vector<float> priorities_;  // host mirror of the leaves (weights, population)
  int64_t population_ = 0;
};

}  // namespace edgewise::gnn
