// GCN, GraphSAGE and GIN node classifiers: a stack of convolutions with dropout and ReLU.
#include "edgewise/gnn/nn/models.hpp"

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/gnn/nn/conv_stack.hpp"
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

template <class Conv>
class ConvStack : public nn_detail::ConvStackModule<Conv, NodeClassifier> {
 public:
  using nn_detail::ConvStackModule<Conv, NodeClassifier>::ConvStackModule;

  Variable forward(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    return this->run(graph, x, generator, this->num_layers(), kSingleProcess);
  }

  Variable embed(const Graph& graph, const NodeFeatures& x, Generator& generator) override {
    EW_REQUIRE(this->num_layers() >= 2, "model: embeddings need a hidden layer (this model has ", this->num_layers(),
               " layer)");
    return this->run(graph, x, generator, this->num_layers() - 1, kSingleProcess);
  }

 private:
  static inline const nn_detail::StackHooks kSingleProcess{};
};

}  // namespace

std::unique_ptr<NodeClassifier> make_model(const ModelConfig& c, Generator& generator, Device device) {
  require_available(device, "make_model");
  if (c.kind == ModelKind::Gat) return make_gat_model(c, generator, device);
  return nn_detail::build_conv_stack(
      c, generator, device, /*gcn_graph_normalized=*/false,
      [&](auto convs, bool decay_first_only) -> std::unique_ptr<NodeClassifier> {
        using Conv = typename decltype(convs)::value_type::element_type;
        return std::make_unique<ConvStack<Conv>>(c, std::move(convs), decay_first_only);
      });
}

}  // namespace edgewise::gnn
