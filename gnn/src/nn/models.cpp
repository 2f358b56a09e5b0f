// GCN, GraphSAGE and GIN node classifiers: a stack of convolutions with dropout and ReLU.
#include "edgewise/gnn/models.hpp"

#include "edgewise/gnn/functional.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "nn/gat_model.hpp"

namespace edgewise::gnn {

ModelKind parse_model_kind(const std::string& name) {
  if (name == "gcn") return ModelKind::GCN;
  if (name == "sage" || name == "graphsage") return ModelKind::GraphSAGE;
  if (name == "gin") return ModelKind::GIN;
  if (name == "gat") return ModelKind::Gat;
  detail::throw_invalid_argument("model: unknown '", name, "' (expected gcn, sage, gin or gat)");
}

const char* to_string(ModelKind kind) {
  switch (kind) {
    case ModelKind::GCN: return "gcn";
    case ModelKind::GraphSAGE: return "sage";
    case ModelKind::GIN: return "gin";
    case ModelKind::Gat: return "gat";
  }
  return "?";
}

ModelConfig default_model_config(ModelKind kind) {
  ModelConfig c;
  c.kind = kind;
  if (kind == ModelKind::Gat) {
    c.hidden_features = 8;
    c.dropout = 0.6f;
    c.gat_heads = 8;
    c.gat_output_heads = 1;
    c.attention_dropout = 0.6f;
  }
  return c;
}

std::vector<ParamGroup> NodeClassifier::param_groups(float weight_decay) const {
  return {ParamGroup{parameters(), weight_decay}};
}

Variable NodeClassifier::embed(const Graph&, const NodeFeatures&, Generator&) {
  detail::throw_invalid_argument("model ", describe(), ": node embeddings are not available");
}

namespace {

// Layer l of L maps in -> hidden, hidden -> hidden, ..., hidden -> out.
template <class Conv, class Make>
std::vector<std::unique_ptr<Conv>> stack(const ModelConfig& c, Make make) {
  EW_REQUIRE(c.layers >= 1, "model: layers (", c.layers, ") must be >= 1");
  EW_REQUIRE(c.in_features > 0 && c.out_features > 0 && c.hidden_features > 0, "model: feature sizes in ",
             c.in_features, ", hidden ", c.hidden_features, ", out ", c.out_features, " must be positive");
  EW_REQUIRE(c.dropout >= 0.0f && c.dropout < 1.0f, "model: dropout (", c.dropout, ") must lie in [0, 1)");
  std::vector<std::unique_ptr<Conv>> convs;
  for (int64_t l = 0; l < c.layers; ++l) {
    const int64_t in = l == 0 ? c.in_features : c.hidden_features;
    const int64_t out = l + 1 == c.layers ? c.out_features : c.hidden_features;
    convs.push_back(make(in, out));
  }
  return convs;
}

template <class Conv>
class ConvStack : public NodeClassifier {
 public:
  ConvStack(const ModelConfig& config, std::vector<std::unique_ptr<Conv>> convs, bool decay_first_only)
      : config_(config), convs_(std::move(convs)), decay_first_only_(decay_first_only) {}

  Variable forward(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    return run(graph, x, generator, convs_.size());
  }

  Variable embed(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    EW_REQUIRE(convs_.size() >= 2, "model: embeddings need a hidden layer (this model has ", convs_.size(),
               " layer)");
    return run(graph, x, generator, convs_.size() - 1);
  }

  NamedParameters named_parameters() const override {
    NamedParameters named;
    for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(named, "convs." + std::to_string(l), *convs_[l]);
    return named;
  }

  std::vector<Variable> parameters() const override { return parameter_values(named_parameters()); }

  std::vector<ParamGroup> param_groups(float weight_decay) const override {
    if (!decay_first_only_) return NodeClassifier::param_groups(weight_decay);
    std::vector<ParamGroup> groups{ParamGroup{convs_[0]->parameters(), weight_decay}, ParamGroup{{}, 0.0f}};
    for (size_t l = 1; l < convs_.size(); ++l) {
      for (const Variable& p : convs_[l]->parameters()) groups[1].params.push_back(p);
    }
    return groups;
  }

  std::string describe() const override {
    std::string s = std::string(to_string(config_.kind)) + "[";
    for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
    return s + "], dropout " + std::to_string(config_.dropout);
  }

 private:
  // Layers [0, count) and, when count < the layer count, the ReLU and dropout that
  // feed layer `count`.
  Variable run(const Graph& graph, const NodeFeatures& x, Generator& generator, size_t count) {
    Variable h;
    if (x.is_sparse()) {
      h = convs_[0]->forward(graph, sparse_dropout(x.sparse, config_.dropout, training(), generator));
    } else {
      h = convs_[0]->forward(graph, dropout(Variable(x.dense), config_.dropout, training(), generator));
    }
    for (size_t l = 1; l < convs_.size(); ++l) {
      h = dropout(relu(h), config_.dropout, training(), generator);
      if (l == count) return h;
      h = convs_[l]->forward(graph, h);
    }
    return h;
  }

  ModelConfig config_;
  std::vector<std::unique_ptr<Conv>> convs_;
  bool decay_first_only_;
};

}  // namespace

std::unique_ptr<NodeClassifier> make_model(const ModelConfig& c, Generator& generator, Device device) {
  require_available(device, "make_model");
  switch (c.kind) {
    case ModelKind::GCN: {
      GCNConvOptions o;
      o.aggregation = c.aggregation;
      o.aggregation.op = ReduceOp::Sum;
      auto convs = stack<GCNConv>(
          c, [&](int64_t in, int64_t out) { return std::make_unique<GCNConv>(in, out, generator, o, device); });
      return std::make_unique<ConvStack<GCNConv>>(c, std::move(convs), /*decay_first_only=*/true);
    }
    case ModelKind::GraphSAGE: {
      SAGEConvOptions o;
      o.aggregator = c.sage_aggregator;
      o.normalize = c.sage_normalize;
      o.aggregation = c.aggregation;
      auto convs = stack<SAGEConv>(
          c, [&](int64_t in, int64_t out) { return std::make_unique<SAGEConv>(in, out, generator, o, device); });
      return std::make_unique<ConvStack<SAGEConv>>(c, std::move(convs), false);
    }
    case ModelKind::GIN: {
      GINConvOptions o;
      o.train_eps = c.gin_train_eps;
      o.aggregation = c.aggregation;
      auto convs = stack<GINConv>(c, [&](int64_t in, int64_t out) {
        return std::make_unique<GINConv>(in, c.hidden_features, out, generator, o, device);
      });
      return std::make_unique<ConvStack<GINConv>>(c, std::move(convs), false);
    }
    case ModelKind::Gat: return make_gat_model(c, generator, device);
  }
  detail::throw_invalid_argument("model: unknown kind");
}

}  // namespace edgewise::gnn
