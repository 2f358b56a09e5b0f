// The GAT node classifier behind make_model(ModelKind::Gat) (models.cpp).
#pragma once

#include <memory>

#include "edgewise/gnn/nn/models.hpp"

namespace edgewise::gnn {

// Veličković et al.'s transductive GAT: dropout on the input, GATConv layers with
// config.gat_heads heads of config.hidden_features (concatenated) and ELU + dropout
// between them, a last GATConv with config.gat_output_heads heads averaged
// (concat=false). Every layer drops attention coefficients with config.attention_dropout.
std::unique_ptr<NodeClassifier> make_gat_model(const ModelConfig& config, Generator& generator, Device device);

}  // namespace edgewise::gnn
