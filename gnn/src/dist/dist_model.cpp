// GCN / GraphSAGE / GIN over one part: the single-process layer stack
// (nn/conv_stack.hpp) with dropout keyed by global element ids, a halo exchange
// before every layer after the first and the owned rows kept after each layer.
#include "edgewise/gnn/dist/trainer.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/gnn/nn/conv_stack.hpp"

namespace edgewise::gnn::dist {

namespace {

class PartHooks : public nn_detail::StackHooks {
 public:
  PartHooks(const ModelConfig& config, const DistTrainData& data, const HaloExchange& halo)
      : halo_(halo), owned_(data.part.num_owned) {
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

  Variable dense_input_dropout(const Variable& x, float p, bool training, Generator& generator) const override {
    return keyed_dropout(x, p, training, generator, input_keys_);
  }
  SparseTensor sparse_input_dropout(const SparseTensor& x, float p, bool training,
                                    Generator& generator) const override {
    return keyed_sparse_dropout(x, p, training, generator, input_keys_);
  }
  Variable hidden_dropout(const Variable& h, float p, bool training, Generator& generator) const override {
    return keyed_dropout(h, p, training, generator, hidden_keys_);
  }
  Variable layer_input(const Variable& h) const override { return halo_exchange(halo_, h); }
  Variable layer_output(const Variable& h) const override { return first_rows(h, owned_); }

 private:
  const HaloExchange& halo_;
  int64_t owned_;
  IndexTensor input_keys_, hidden_keys_;  // dropout keys of the input rows (or stored values), owned hidden rows
};

template <class Conv>
class DistConvStack : public nn_detail::ConvStackModule<Conv, DistNodeClassifier> {
 public:
  DistConvStack(const ModelConfig& config, std::vector<std::unique_ptr<Conv>> convs, bool decay_first_only,
                const DistTrainData& data, const Graph& graph, const HaloExchange& halo)
      : nn_detail::ConvStackModule<Conv, DistNodeClassifier>(config, std::move(convs), decay_first_only),
        data_(data), graph_(graph), hooks_(config, data, halo) {}

  Variable forward(Generator& generator) override {
    return this->run(graph_, data_.local.features, generator, this->num_layers(), hooks_);
  }

  std::string describe() const override {
    return nn_detail::ConvStackModule<Conv, DistNodeClassifier>::describe() + ", part " +
           std::to_string(data_.part.rank) + " of " + std::to_string(data_.part.num_parts);
  }

 private:
  const DistTrainData& data_;
  Graph graph_;
  PartHooks hooks_;
};

}  // namespace

std::unique_ptr<DistNodeClassifier> make_dist_model(const ModelConfig& c, Generator& generator,
                                                    const DistTrainData& data, const HaloExchange& halo) {
  const Device device = data.local.features.device();
  EW_REQUIRE(halo.device() == device, "make_dist_model: the halo exchange runs on ", halo.device().str(),
             " but the data is on ", device.str());
  if (c.kind == ModelKind::Gat) {
    detail::throw_invalid_argument("distributed training: model ", to_string(c.kind),
                                   " is not supported (expected gcn, sage or gin)");
  }
  // The part's GCN graph is normalised already (global degrees): its layers propagate as is.
  const Graph& graph = c.kind == ModelKind::GCN ? data.gcn_graph : data.local.graph;
  return nn_detail::build_conv_stack(
      c, generator, device, /*gcn_graph_normalized=*/true,
      [&](auto convs, bool decay_first_only) -> std::unique_ptr<DistNodeClassifier> {
        using Conv = typename decltype(convs)::value_type::element_type;
        return std::make_unique<DistConvStack<Conv>>(c, std::move(convs), decay_first_only, data, graph, halo);
      });
}

}  // namespace edgewise::gnn::dist
