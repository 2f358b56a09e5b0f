// GAT node classifier: input dropout, GATConv layers with ELU and dropout between them.
#include "nn/gat_model.hpp"

#include "edgewise/gnn/message_passing/attention.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gat_conv.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

class GatModel : public NodeClassifier {
 public:
  GatModel(const ModelConfig& config, Generator& generator, Device device) : config_(config) {
    const ModelConfig& c = config;
    EW_REQUIRE(c.layers >= 1, "model: layers (", c.layers, ") must be >= 1");
    EW_REQUIRE(c.in_features > 0 && c.out_features > 0 && c.hidden_features > 0, "model: feature sizes in ",
               c.in_features, ", hidden ", c.hidden_features, ", out ", c.out_features, " must be positive");
    EW_REQUIRE(c.dropout >= 0.0f && c.dropout < 1.0f, "model: dropout (", c.dropout, ") must lie in [0, 1)");
    EW_REQUIRE(c.gat_heads >= 1 && c.gat_output_heads >= 1, "model: gat_heads (", c.gat_heads,
               ") and gat_output_heads (", c.gat_output_heads, ") must be >= 1");
    EW_REQUIRE(c.attention_dropout >= 0.0f && c.attention_dropout < 1.0f, "model: attention_dropout (",
               c.attention_dropout, ") must lie in [0, 1)");
    int64_t in = c.in_features;
    for (int64_t l = 0; l < c.layers; ++l) {
      const bool last = l + 1 == c.layers;
      GATConvOptions o;
      o.heads = last ? c.gat_output_heads : c.gat_heads;
      o.concat = !last;
      o.dropout = c.attention_dropout;
      convs_.push_back(std::make_unique<GATConv>(in, last ? c.out_features : c.hidden_features, generator, o, device));
      in = convs_.back()->output_features();
    }
  }

  Variable forward(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    return run(graph, x, generator, convs_.size());
  }

  Variable embed(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    EW_REQUIRE(convs_.size() >= 2, "model: embeddings need a hidden layer (this model has ", convs_.size(),
               " layer)");
    return run(graph, x, generator, convs_.size() - 1);
  }

  void train(bool on) override {
    NodeClassifier::train(on);
    for (auto& conv : convs_) conv->train(on);
  }

  std::vector<Variable> parameters() const override {
    std::vector<Variable> ps;
    for (const auto& conv : convs_) {
      for (const Variable& p : conv->parameters()) ps.push_back(p);
    }
    return ps;
  }

  std::string describe() const override {
    std::string s = "gat[";
    for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
    return s + "], dropout " + std::to_string(config_.dropout) + ", attention dropout " +
           std::to_string(config_.attention_dropout);
  }

 private:
  // Layers [0, count) and, when count < the layer count, the ELU and dropout that feed
  // layer `count`.
  Variable run(const Graph& graph, const NodeFeatures& x, Generator& generator, size_t count) {
    Variable h;
    if (x.is_sparse()) {
      h = convs_[0]->forward(graph, sparse_dropout(x.sparse, config_.dropout, training(), generator), generator);
    } else {
      h = convs_[0]->forward(graph, dropout(Variable(x.dense), config_.dropout, training(), generator), generator);
    }
    for (size_t l = 1; l < convs_.size(); ++l) {
      h = dropout(elu(h), config_.dropout, training(), generator);
      if (l == count) return h;
      h = convs_[l]->forward(graph, h, generator);
    }
    return h;
  }

  ModelConfig config_;
  std::vector<std::unique_ptr<GATConv>> convs_;
};

}  // namespace

std::unique_ptr<NodeClassifier> make_gat_model(const ModelConfig& config, Generator& generator, Device device) {
  return std::make_unique<GatModel>(config, generator, device);
}

}  // namespace edgewise::gnn
