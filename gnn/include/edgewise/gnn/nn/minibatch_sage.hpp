// Minibatch GraphSAGE: a SAGEConv stack that runs on NeighborSampler blocks for
// training and on the full graph for evaluation (trained by train/minibatch_trainer.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/message_passing/block_ops.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"

namespace edgewise::gnn {

// GraphSAGE with config.layers SAGEConvs (config.kind is ignored), dropout on the
// input and between layers, ReLU between layers — the same parameters whether it
// runs on blocks or on the whole graph.
class MiniBatchSAGE : public NodeClassifier {
 public:
  MiniBatchSAGE(const ModelConfig& config, Generator& generator, Device device = Device::cpu());

  // Full graph: logits [N, out_features] (evaluation, or full-batch training).
  Variable forward(const Graph& graph, const NodeFeatures& x, Generator& generator) override;
  // Blocks: x holds the features of batch.input_nodes (FeatureGatherer); layer l runs on
  // batch.blocks[l] and keeps its destination rows, so the result is [B, out_features]
  // for batch.seed_nodes in order. batch.num_layers() must equal the layer count.
  Variable forward(const MiniBatch& batch, const NodeFeatures& x, Generator& generator);

  int64_t num_layers() const { return static_cast<int64_t>(convs_.size()); }
  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;  // "convs.<layer>.<SAGEConv name>", as the sage model
  std::string describe() const override;

 private:
  ModelConfig config_;
  std::vector<std::unique_ptr<SAGEConv>> convs_;
};

}  // namespace edgewise::gnn
