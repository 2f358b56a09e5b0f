// LayerwiseSampler: layer-wise node sampling à la FastGCN / LADIES on a SegmentTree,
// with importance-weighted blocks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::gnn {

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
