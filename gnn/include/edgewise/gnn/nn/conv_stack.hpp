// The GCN / GraphSAGE / GIN layer stack that the single-process models (make_model)
// and the distributed ones (dist::make_dist_model) share: building the layers (one
// order, so one Generator gives both the same weights), running them, their
// parameters, weight-decay groups and description. What happens to the rows between
// layers is the caller's StackHooks: the single process drops out and propagates as
// is; a distributed part keys its dropout by global element ids, exchanges halo rows
// before every layer after the first and keeps its owned rows after each.
#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::nn_detail {

// The row handling between layers; the defaults are the single process's.
class StackHooks {
 public:
  virtual ~StackHooks() = default;
  virtual Variable dense_input_dropout(const Variable& x, float p, bool training, Generator& generator) const {
    return dropout(x, p, training, generator);
  }
  virtual SparseTensor sparse_input_dropout(const SparseTensor& x, float p, bool training,
                                            Generator& generator) const {
    return sparse_dropout(x, p, training, generator);
  }
  virtual Variable hidden_dropout(const Variable& h, float p, bool training, Generator& generator) const {
    return dropout(h, p, training, generator);
  }
  // The input of layer l >= 1, from the previous layer's activations.
  virtual Variable layer_input(const Variable& h) const { return h; }
  // The rows of a layer's output that go on.
  virtual Variable layer_output(const Variable& h) const { return h; }
};

// A stack of `Conv` layers as a `Base` module (NodeClassifier or DistNodeClassifier).
template <class Conv, class Base>
class ConvStackModule : public Base {
 public:
  ConvStackModule(const ModelConfig& config, std::vector<std::unique_ptr<Conv>> convs, bool decay_first_only)
      : config_(config), convs_(std::move(convs)), decay_first_only_(decay_first_only) {}

  NamedParameters named_parameters() const override {
    NamedParameters named;
    for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(named, "convs." + std::to_string(l), *convs_[l]);
    return named;
  }

  std::vector<Variable> parameters() const override { return parameter_values(named_parameters()); }

  // GCN follows Kipf & Welling (and PyG's example): only the first layer is decayed.
  std::vector<ParamGroup> param_groups(float weight_decay) const override {
    if (!decay_first_only_) return {ParamGroup{parameters(), weight_decay}};
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

 protected:
  size_t num_layers() const { return convs_.size(); }
  const ModelConfig& config() const { return config_; }

  // Layers [0, count) and, when count < the layer count, the ReLU and dropout that
  // feed layer `count`.
  Variable run(const Graph& graph, const NodeFeatures& x, Generator& generator, size_t count,
               const StackHooks& hooks) {
    const float p = config_.dropout;
    const bool on = this->training();
    Variable h = x.is_sparse() ? convs_[0]->forward(graph, hooks.sparse_input_dropout(x.sparse, p, on, generator))
                               : convs_[0]->forward(graph, hooks.dense_input_dropout(Variable(x.dense), p, on, generator));
    h = hooks.layer_output(h);
    for (size_t l = 1; l < convs_.size(); ++l) {
      h = hooks.hidden_dropout(relu(h), p, on, generator);
      if (l == count) return h;
      h = hooks.layer_output(convs_[l]->forward(graph, hooks.layer_input(h)));
    }
    return h;
  }

 private:
  ModelConfig config_;
  std::vector<std::unique_ptr<Conv>> convs_;
  bool decay_first_only_;
};

// Layer l of L maps in -> hidden, hidden -> hidden, ..., hidden -> out.
template <class Conv, class Make>
std::vector<std::unique_ptr<Conv>> stack_layers(const ModelConfig& c, Make make) {
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

// The layers of a GCN, GraphSAGE or GIN config on `device`, handed to
// wrap(convs, decay_first_only), which makes the module. `gcn_graph_normalized`: the
// graph GCN layers will see is A + I normalised already, so they propagate as is.
template <class Wrap>
auto build_conv_stack(const ModelConfig& c, Generator& generator, Device device, bool gcn_graph_normalized,
                      Wrap&& wrap) -> std::invoke_result_t<Wrap&, std::vector<std::unique_ptr<GCNConv>>, bool> {
  switch (c.kind) {
    case ModelKind::GCN: {
      GCNConvOptions o;
      o.aggregation = c.aggregation;
      o.aggregation.op = ReduceOp::Sum;
      if (gcn_graph_normalized) {
        o.normalize = false;
        o.add_self_loops = false;
      }
      return wrap(stack_layers<GCNConv>(c, [&](int64_t in, int64_t out) {
                    return std::make_unique<GCNConv>(in, out, generator, o, device);
                  }),
                  /*decay_first_only=*/true);
    }
    case ModelKind::GraphSAGE: {
      SAGEConvOptions o;
      o.aggregator = c.sage_aggregator;
      o.normalize = c.sage_normalize;
      o.aggregation = c.aggregation;
      return wrap(stack_layers<SAGEConv>(c, [&](int64_t in, int64_t out) {
                    return std::make_unique<SAGEConv>(in, out, generator, o, device);
                  }),
                  false);
    }
    case ModelKind::GIN: {
      GINConvOptions o;
      o.train_eps = c.gin_train_eps;
      o.aggregation = c.aggregation;
      return wrap(stack_layers<GINConv>(c, [&](int64_t in, int64_t out) {
                    return std::make_unique<GINConv>(in, c.hidden_features, out, generator, o, device);
                  }),
                  false);
    }
    case ModelKind::Gat: break;
  }
  detail::throw_invalid_argument("model: ", to_string(c.kind), " is not a GCN, GraphSAGE or GIN stack");
}

}  // namespace edgewise::gnn::nn_detail
