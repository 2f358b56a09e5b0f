// GIN graph classifier: GINConv stack, global pooling, MLP head.
#include "edgewise/gnn/nn/gin_graph_classifier.hpp"

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/message_passing/pooling.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

const GinGraphConfig& checked(const GinGraphConfig& c) {
  EW_REQUIRE(c.layers >= 1, "GinGraphClassifier: layers (", c.layers, ") must be >= 1");
  EW_REQUIRE(c.in_features > 0 && c.hidden_features > 0 && c.num_classes > 0, "GinGraphClassifier: in_features (",
             c.in_features, "), hidden_features (", c.hidden_features, ") and num_classes (", c.num_classes,
             ") must be positive");
  EW_REQUIRE(c.dropout >= 0.0f && c.dropout < 1.0f, "GinGraphClassifier: dropout (", c.dropout,
             ") must lie in [0, 1)");
  return c;
}

}  // namespace

GinGraphClassifier::GinGraphClassifier(const GinGraphConfig& config, Generator& generator, Device device)
    : config_(checked(config)),
      layers_([&] {
        std::vector<Layer> layers;
        const int64_t hidden = config.hidden_features;
        for (int64_t l = 0; l < config.layers; ++l) {
          const int64_t in = l == 0 ? config.in_features : hidden;
          Linear lin1(in, hidden, generator, true, WeightInit::LinearDefault, device);
          Linear lin2(hidden, hidden, generator, true, WeightInit::LinearDefault, device);
          layers.push_back(Layer{std::move(lin1), std::move(lin2),
                                 config.batch_norm ? std::make_unique<BatchNorm1d>(hidden, 1e-5f, 0.1f, device)
                                                   : nullptr});
        }
        return layers;
      }()),
      head1_(config.hidden_features, config.hidden_features, generator, true, WeightInit::LinearDefault, device),
      head2_(config.hidden_features, config.num_classes, generator, true, WeightInit::LinearDefault, device) {}

void GinGraphClassifier::train(bool on) {
  Module::train(on);
  for (Layer& layer : layers_)
    if (layer.norm) layer.norm->train(on);
}

Variable GinGraphClassifier::forward(const GraphBatch& batch, Generator& generator) {
  EW_REQUIRE(batch.x.cols() == config_.in_features, "GinGraphClassifier: batch features ", batch.x.shape_str(),
             " do not match in_features ", config_.in_features);
  Variable h(batch.x);
  for (Layer& layer : layers_) {
    const Variable projected = matmul(h, layer.lin1.weight());
    Variable pre = add_bias(add(projected, aggregate(batch.graph, projected)), layer.lin1.bias());
    if (layer.norm) pre = layer.norm->forward(pre);
    h = relu(layer.lin2.forward(relu(pre)));
  }
  Variable pooled = global_pool(h, batch.graph_offsets, config_.pooling);
  Variable z = dropout(relu(head1_.forward(pooled)), config_.dropout, training(), generator);
  return head2_.forward(z);
}

NamedParameters GinGraphClassifier::named_parameters() const {
  NamedParameters named;
  // PyG's names: convs.<l>.nn = Sequential(Linear, BatchNorm1d, ReLU, Linear).
  for (size_t l = 0; l < layers_.size(); ++l) {
    const std::string prefix = "convs." + std::to_string(l) + ".nn.";
    append_named_parameters(named, prefix + "0", layers_[l].lin1);
    if (layers_[l].norm) append_named_parameters(named, prefix + "1", *layers_[l].norm);
    append_named_parameters(named, prefix + (layers_[l].norm ? "3" : "2"), layers_[l].lin2);
  }
  append_named_parameters(named, "mlp.0", head1_);
  append_named_parameters(named, "mlp.1", head2_);
  return named;
}

std::vector<Variable> GinGraphClassifier::parameters() const { return parameter_values(named_parameters()); }

std::string GinGraphClassifier::describe() const {
  std::string s = "GinGraphClassifier[";
  for (size_t l = 0; l < layers_.size(); ++l)
    s += (l ? ", " : "") + std::string("GIN(") + std::to_string(layers_[l].lin1.in_features()) + " -> " +
         std::to_string(config_.hidden_features) + (layers_[l].norm ? " -> BatchNorm" : "") + " -> " +
         std::to_string(config_.hidden_features) + ")";
  return s + "], " + std::string(to_string(config_.pooling)) + " pooling, head " +
         std::to_string(config_.hidden_features) + " -> " + std::to_string(config_.hidden_features) + " -> " +
         std::to_string(config_.num_classes) + ", dropout " + std::to_string(config_.dropout);
}

}  // namespace edgewise::gnn
