// GCN / GraphSAGE / GIN over one part: the single-process ConvStack (nn/models.cpp)
// with a halo exchange before every layer after the first and the owned rows kept
// after each layer.
#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/dist/trainer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::dist {

namespace {

template <class Conv>
class DistConvStack : public DistNodeClassifier {
 public:
  DistConvStack(const ModelConfig& config, std::vector<std::unique_ptr<Conv>> convs, bool decay_first_only,
                const DistTrainData& data, const Graph& graph, const HaloExchange& halo)
      : config_(config), convs_(std::move(convs)), decay_first_only_(decay_first_only), data_(data), graph_(graph),
        halo_(halo) {
    // Dropout keys: element (r, c) of an [N, C] matrix is r * C + c in the single process.
    // Sparse features: stored value j is global value position value_keys[j].
    const Part& part = data.part;
    const NodeFeatures& x = data.local.features;
    const Device device = x.device();
    if (x.is_sparse()) {
      input_keys_ = sparse_value_keys(x.sparse, part.feature_value_base, device);
    } else {
      std::vector<int64_t> keys;
      for (int64_t g : part.global_ids) keys.push_back(g * x.cols());
      input_keys_ = IndexTensor::vector(keys, device);
    }
    std::vector<int64_t> keys;
    for (int64_t i = 0; i < part.num_owned; ++i) keys.push_back(part.global_ids[static_cast<size_t>(i)] * config.hidden_features);
    hidden_keys_ = IndexTensor::vector(keys, device);
  }

  Variable forward(Generator& generator) override {
    const NodeFeatures& x = data_.local.features;
    const int64_t owned = data_.part.num_owned;
    Variable h = x.is_sparse()
                     ? convs_[0]->forward(graph_, keyed_sparse_dropout(x.sparse, config_.dropout, training(), generator,
                                                                       input_keys_))
                     : convs_[0]->forward(graph_, keyed_dropout(Variable(x.dense), config_.dropout, training(),
                                                                generator, input_keys_));
    h = first_rows(h, owned);
    for (size_t l = 1; l < convs_.size(); ++l) {
      h = keyed_dropout(relu(h), config_.dropout, training(), generator, hidden_keys_);
      h = convs_[l]->forward(graph_, halo_exchange(halo_, h));
      h = first_rows(h, owned);
    }
    return h;
  }

  NamedParameters named_parameters() const override {
    NamedParameters named;
    for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(named, "convs." + std::to_string(l), *convs_[l]);
    return named;
  }
  std::vector<Variable> parameters() const override { return parameter_values(named_parameters()); }

  std::vector<ParamGroup> param_groups(float weight_decay) const override {
    if (!decay_first_only_) return {ParamGroup{parameters(), weight_decay}};
    std::vector<ParamGroup> groups{ParamGroup{convs_[0]->parameters(), weight_decay}, ParamGroup{{}, 0.0f}};
    for (size_t l = 1; l < convs_.size(); ++l)
      for (const Variable& p : convs_[l]->parameters()) groups[1].params.push_back(p);
    return groups;
  }

  std::string describe() const override {
    std::string s = std::string(to_string(config_.kind)) + "[";
    for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
    return s + "], dropout " + std::to_string(config_.dropout) + ", part " + std::to_string(data_.part.rank) + " of " +
           std::to_string(data_.part.num_parts);
  }

 private:
  ModelConfig config_;
  std::vector<std::unique_ptr<Conv>> convs_;
  bool decay_first_only_;
  const DistTrainData& data_;
  Graph graph_;
  const HaloExchange& halo_;
  IndexTensor input_keys_, hidden_keys_;  // dropout keys of the input rows (or stored values), owned hidden rows
};

// make_model()'s layer shapes, in its order (so the Generator gives the same weights).
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

}  // namespace

std::unique_ptr<DistNodeClassifier> make_dist_model(const ModelConfig& c, Generator& generator,
                                                    const DistTrainData& data, const HaloExchange& halo) {
  const Device device = data.local.features.device();
  EW_REQUIRE(halo.device() == device, "make_dist_model: the halo exchange runs on ", halo.device().str(),
             " but the data is on ", device.str());
  switch (c.kind) {
    case ModelKind::GCN: {
      // The part's graph is normalised already (global degrees): the layer propagates as is.
      GCNConvOptions o;
      o.aggregation = c.aggregation;
      o.aggregation.op = ReduceOp::Sum;
      o.normalize = false;
      o.add_self_loops = false;
      auto convs = stack<GCNConv>(
          c, [&](int64_t in, int64_t out) { return std::make_unique<GCNConv>(in, out, generator, o, device); });
      return std::make_unique<DistConvStack<GCNConv>>(c, std::move(convs), true, data, data.gcn_graph, halo);
    }
    case ModelKind::GraphSAGE: {
      SAGEConvOptions o;
      o.aggregator = c.sage_aggregator;
      o.normalize = c.sage_normalize;
      o.aggregation = c.aggregation;
      auto convs = stack<SAGEConv>(
          c, [&](int64_t in, int64_t out) { return std::make_unique<SAGEConv>(in, out, generator, o, device); });
      return std::make_unique<DistConvStack<SAGEConv>>(c, std::move(convs), false, data, data.local.graph, halo);
    }
    case ModelKind::GIN: {
      GINConvOptions o;
      o.train_eps = c.gin_train_eps;
      o.aggregation = c.aggregation;
      auto convs = stack<GINConv>(c, [&](int64_t in, int64_t out) {
        return std::make_unique<GINConv>(in, c.hidden_features, out, generator, o, device);
      });
      return std::make_unique<DistConvStack<GINConv>>(c, std::move(convs), false, data, data.local.graph, halo);
    }
    case ModelKind::Gat: break;
  }
  detail::throw_invalid_argument("distributed training: model ", to_string(c.kind),
                                 " is not supported (expected gcn, sage or gin)");
}

}  // namespace edgewise::gnn::dist
