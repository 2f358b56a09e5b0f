// Ready-made node classifiers: GCN, GraphSAGE and GIN stacks in the shape of the
// PyG examples (dropout on the input and between layers, ReLU between layers), and GAT
// (ELU between layers, multi-head attention; see gnn/src/nn/gat_model.hpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/nn/gin_conv.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/nn/sage_conv.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

enum class ModelKind { GCN, GraphSAGE, GIN, Gat };
ModelKind parse_model_kind(const std::string& name);  // "gcn", "sage"/"graphsage", "gin", "gat"
const char* to_string(ModelKind kind);

struct ModelConfig {
  ModelKind kind = ModelKind::GCN;
  int64_t in_features = 0;
  int64_t hidden_features = 16;
  int64_t out_features = 0;  // classes
  int64_t layers = 2;
  float dropout = 0.5f;
  SageAggregator sage_aggregator = SageAggregator::Mean;
  bool sage_normalize = false;
  bool gin_train_eps = false;
  // GAT (Veličković et al.): heads of the hidden layers (concatenated), heads of the
  // output layer (averaged), dropout on the attention coefficients.
  int64_t gat_heads = 8;
  int64_t gat_output_heads = 1;
  float attention_dropout = 0.6f;
  AggregationOptions aggregation{};  // strategy / form for every layer
};

// The published recipe's defaults for `kind` (in/out features left 0): for Gat,
// Veličković et al.'s 8 heads x 8 hidden features, dropout 0.6 on inputs and attention,
// one output head; for the others, the ModelConfig defaults.
ModelConfig default_model_config(ModelKind kind);

class NodeClassifier : public Module {
 public:
  // Class scores (logits) [N, out_features] for every node.
  virtual Variable forward(const Graph& graph, const NodeFeatures& x, Generator& generator) = 0;
  // Node embeddings [N, hidden_features]: the input of the last layer (the hidden
  // layer's output after ReLU and dropout). Throws std::invalid_argument for a model
  // without a hidden layer or one that does not provide them.
  virtual Variable embed(const Graph& graph, const NodeFeatures& x, Generator& generator);
  // Parameters grouped for weight decay. GCN follows Kipf & Welling (and PyG's
  // example): only the first layer is decayed; the others decay everything.
  virtual std::vector<ParamGroup> param_groups(float weight_decay) const;
};

std::unique_ptr<NodeClassifier> make_model(const ModelConfig& config, Generator& generator,
                                           Device device = Device::cpu());

}  // namespace edgewise::gnn
