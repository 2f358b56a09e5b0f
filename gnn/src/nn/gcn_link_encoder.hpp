// The link task's GCN encoder: GCNConv layers (ReLU and dropout between them) over a
// graph that is already GCN-normalised. The task alternates between two message-
// passing graphs (training and test); normalising each once, outside the layers,
// keeps the layers' one-graph caches from rebuilding the normalised graph (and its
// transposed CSR for backward) on every switch.
#pragma once

#include <memory>
#include <vector>

#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn::link_detail {

class GcnLinkEncoder : public Module {
 public:
  // in -> hidden -> ... -> out, `layers` convolutions (>= 1).
  GcnLinkEncoder(int64_t in_features, int64_t hidden_features, int64_t out_features, int64_t layers, float dropout,
                 Generator& generator, Device device);
  // Embeddings [N, out] over `normalized` (Graph::gcn_normalized()).
  Variable forward(const Graph& normalized, const NodeFeatures& x, Generator& generator) const;
  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;

 private:
  std::vector<std::unique_ptr<GCNConv>> convs_;
  float dropout_;
};

}  // namespace edgewise::gnn::link_detail
