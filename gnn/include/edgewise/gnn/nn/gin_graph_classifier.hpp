// The GIN graph classifier (Xu et al., "How Powerful are Graph Neural Networks?",
// ICLR 2019) as PyG's GIN example builds it: L GIN layers mlp(x_i + sum_j x_j) with
// mlp = Linear -> BatchNorm (optional, off by default) -> ReLU -> Linear, each
// followed by ReLU; sum pooling (or mean / max) of the last layer per graph; a head
// Linear -> ReLU -> dropout -> Linear. Trained by train/graph_classification.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/graph/graph_batch.hpp"
#include "edgewise/gnn/nn/batch_norm.hpp"
#include "edgewise/gnn/nn/linear.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::gnn {

struct GinGraphConfig {
  int64_t in_features = 0;
  int64_t hidden_features = 64;
  int64_t num_classes = 2;
  int64_t layers = 3;
  float dropout = 0.5f;             // in the head, after its hidden layer
  ReduceOp pooling = ReduceOp::Sum;  // Sum, Mean or Max
  bool batch_norm = false;  // BatchNorm1d inside each GIN MLP (PyG's MLP default has it)
};

class GinGraphClassifier : public Module {
 public:
  GinGraphClassifier(const GinGraphConfig& config, Generator& generator, Device device = Device::cpu());
  // Logits [B, num_classes] for the graphs of `batch` (training mode updates the
  // batch-norm running statistics).
  Variable forward(const GraphBatch& batch, Generator& generator);
  void train(bool on = true) override;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;

 private:
  GinGraphConfig config_;
  // One GIN layer: mlp(x + sum_j x_j), its first linear map applied before the
  // sum (it is linear, and the hidden width is the smaller one).
  struct Layer {
    Linear lin1, lin2;
    std::unique_ptr<BatchNorm1d> norm;  // null without batch norm
  };
  std::vector<Layer> layers_;
  Linear head1_, head2_;
};

}  // namespace edgewise::gnn
