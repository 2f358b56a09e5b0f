// GIN graph classifier: GINConv stack, global pooling, MLP head.
#include "edgewise/gnn/graph_classification.hpp"

#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/pooling.hpp"
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
      convs_([&] {
        std::vector<std::unique_ptr<GINConv>> convs;
        GINConvOptions o;
        o.train_eps = config.train_eps;
        for (int64_t l = 0; l < config.layers; ++l) {
          const int64_t in = l == 0 ? config.in_features : config.hidden_features;
          convs.push_back(std::make_unique<GINConv>(in, config.hidden_features, config.hidden_features, generator, o,
                                                    device));
        }
        return convs;
      }()),
      head1_(config.hidden_features, config.hidden_features, generator, true, WeightInit::LinearDefault, device),
      head2_(config.hidden_features, config.num_classes, generator, true, WeightInit::LinearDefault, device) {}

Variable GinGraphClassifier::forward(const GraphBatch& batch, Generator& generator) const {
  EW_REQUIRE(batch.x.cols() == config_.in_features, "GinGraphClassifier: batch features ", batch.x.shape_str(),
             " do not match in_features ", config_.in_features);
  Variable h(batch.x);
  for (const auto& conv : convs_) h = relu(conv->forward(batch.graph, h));
  Variable pooled = global_pool(h, batch.graph_offsets, config_.pooling);
  Variable z = dropout(relu(head1_.forward(pooled)), config_.dropout, training(), generator);
  return head2_.forward(z);
}

NamedParameters GinGraphClassifier::named_parameters() const {
  NamedParameters named;
  for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(named, "convs." + std::to_string(l), *convs_[l]);
  append_named_parameters(named, "mlp.0", head1_);
  append_named_parameters(named, "mlp.1", head2_);
  return named;
}

std::vector<Variable> GinGraphClassifier::parameters() const { return parameter_values(named_parameters()); }

std::string GinGraphClassifier::describe() const {
  std::string s = "GinGraphClassifier[";
  for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
  return s + "], " + std::string(to_string(config_.pooling)) + " pooling, head " +
         std::to_string(config_.hidden_features) + " -> " + std::to_string(config_.hidden_features) + " -> " +
         std::to_string(config_.num_classes) + ", dropout " + std::to_string(config_.dropout);
}

}  // namespace edgewise::gnn
