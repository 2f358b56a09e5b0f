// Building blocks of minibatch training on sampled blocks: taking a layer's
// destination rows, gathering the input nodes' features, an importance-weighted loss.
#pragma once

#include <cstdint>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

// h [block.num_src, C] -> its first block.num_dst rows, the destination nodes' (a
// copy; backward pads the gradient with zero rows). DGL's h[:block.num_dst_nodes()].
// std::invalid_argument when h has not num_src rows.
Variable block_dst_rows(const Variable& h, const Block& block);

// Gathers rows of node features — the input_nodes of a minibatch — on the features'
// device. Dense: one spmm gather (one edge per output row). Sparse (CSR): the selected
// rows as a new CSR, built on the host (a host copy of a device CSR is kept).
class FeatureGatherer {
 public:
  FeatureGatherer() = default;
  explicit FeatureGatherer(const NodeFeatures& features);
  // nodes: ids in [0, rows) (host or device, any shape, read flat); result rows in that order.
  NodeFeatures gather(const IndexTensor& nodes) const;

 private:
  NodeFeatures features_;
  CsrMatrix host_csr_;  // sparse features on the host
};

// Importance-weighted cross-entropy: loss = sum_i weights[i] * CE(logits[i], labels[i])
// over all B rows (logits [B, K], labels [B] class ids in [0, K), weights [B]; with
// weights 1/B it is the mean). The weights of SeedSampler batches make the loss an
// unbiased estimate of the full training loss. When per_row is given it receives the
// B unweighted per-row losses (e.g. new SeedSampler priorities). The loss and its
// gradient are computed on the host (B x K is small).
Variable weighted_cross_entropy(const Variable& logits, const std::vector<int64_t>& labels,
                                const std::vector<float>& weights, std::vector<float>* per_row = nullptr);

}  // namespace edgewise::gnn
