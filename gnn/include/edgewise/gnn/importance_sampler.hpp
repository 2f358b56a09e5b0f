// Importance sampling on a SegmentTree: seed nodes drawn in proportion to updatable
// priorities (loss- or degree-prioritised minibatches), and layer-wise node sampling
// à la FastGCN / LADIES with importance-weighted blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "edgewise/gnn/neighbor_sampler.hpp"
#include "edgewise/gnn/stream.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::gnn {

// ---------------------------------------------------------------------------------
// Seed-node sampling
// ---------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------
// Layer-wise importance sampling (FastGCN, LADIES)
// ---------------------------------------------------------------------------------

enum class LayerwiseScheme {
  // FastGCN (Chen et al. 2018): one fixed proposal over all nodes,
  // q(u) ∝ ||Â(:, u)||^2 (squared column norm of the normalised adjacency).
  FastGCN,
  // LADIES (Zou et al. 2019): a proposal per layer over the in-neighbours of that
  // layer's destination nodes D, q(u) ∝ sum_{v in D} Â(v, u)^2, so no draw is wasted on
  // a node no destination reads.
  LADIES,
};

struct LayerwiseSamplerOptions {
  LayerwiseScheme scheme = LayerwiseScheme::LADIES;
  // Row-normalise each block (each destination's weights sum to 1), as LADIES' and
  // FastGCN's reference code do: lower variance for a small bias. Off: the unbiased
  // estimator below.
  bool row_normalize = true;
  // Â = D^-1/2 (A + I) D^-1/2 (Graph::gcn_normalized); false: without the self loops.
  bool add_self_loops = true;
  std::optional<Device> device;  // where blocks go; empty: the graph's device
};

// layer_sizes [L]: t_l, the number of draws for block l (outermost first, as in
// NeighborSampler; the last entry draws the seeds' neighbours), each >= 1; a size
// above the graph's node count N is clamped to N (layer_sizes() shows the clamped
// values: more draws than nodes would only repeat nodes).
//
// Block l, destination nodes D (distinct): t = t_l nodes u_1..u_t are drawn i.i.d. from
// q (SegmentTree::sample, Philox keyed by the generator's seed and one stream per
// layer); c_u counts the draws of u. For v in D and u drawn with Â(v, u) != 0 the block
// has the edge u -> v with weight
//     w(v, u) = Â(v, u) * c_u / (t * q(u)),
// so that sum_u w(v, u) h(u) — a SAGEConv with the Sum aggregator on block.graph — is
// an unbiased estimate of (Â h)(v) = sum_u Â(v, u) h(u): E[c_u] = t q(u). With
// row_normalize, w(v, ·) is divided by its row sum (a destination without sampled
// neighbours keeps no edges). The block's sources are D, then the drawn nodes that
// some destination reads, in ascending id (relabelled like NeighborSampler's);
// block.edge_ids are CSR positions in normalized_graph() (Â has self loops the input
// graph lacks).
//
// Sampling runs on the host; blocks are delivered on the graph's device (options.device).
class LayerwiseSampler {
 public:
  LayerwiseSampler(const Graph& graph, std::vector<int64_t> layer_sizes, LayerwiseSamplerOptions options = {});

  // Seeds as in NeighborSampler::sample (distinct, in [0, N)).
  MiniBatch sample(std::span<const int64_t> seed_nodes, Generator& generator) const;
  MiniBatch sample(const IndexTensor& seed_nodes, Generator& generator) const;

  const std::vector<int64_t>& layer_sizes() const noexcept { return layer_sizes_; }
  const Graph& normalized_graph() const;  // Â on the host
  // FastGCN's q over all nodes [N] (sums to 1); the LADIES proposal depends on D.
  std::vector<double> fastgcn_proposal() const;

 private:
  struct State;
  std::vector<int64_t> layer_sizes_;
  LayerwiseSamplerOptions options_;
  Device device_;
  std::shared_ptr<const State> state_;
};

}  // namespace edgewise::gnn
