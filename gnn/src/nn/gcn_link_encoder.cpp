// GcnLinkEncoder (see gcn_link_encoder.hpp).
#include "nn/gcn_link_encoder.hpp"

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::link_detail {

GcnLinkEncoder::GcnLinkEncoder(int64_t in_features, int64_t hidden_features, int64_t out_features, int64_t layers,
                               float dropout, Generator& generator, Device device)
    : dropout_(dropout) {
  constexpr const char* kOp = "GCN link encoder";
  EW_REQUIRE(layers >= 1, kOp, ": layers (", layers, ") must be >= 1");
  EW_REQUIRE(in_features >= 1 && hidden_features >= 1 && out_features >= 1, kOp, ": features (", in_features,
             " -> ", hidden_features, " -> ", out_features, ") must be >= 1");
  EW_REQUIRE(dropout >= 0.0f && dropout < 1.0f, kOp, ": dropout (", dropout, ") must lie in [0, 1)");
  GCNConvOptions options;
  options.normalize = false;  // the caller passes the normalised graph
  options.cached = false;
  for (int64_t l = 0; l < layers; ++l) {
    const int64_t in = l == 0 ? in_features : hidden_features;
    const int64_t out = l == layers - 1 ? out_features : hidden_features;
    convs_.push_back(std::make_unique<GCNConv>(in, out, generator, options, device));
  }
}

Variable GcnLinkEncoder::forward(const Graph& normalized, const NodeFeatures& x, Generator& generator) const {
  Variable h = x.is_sparse() ? convs_[0]->forward(normalized, x.sparse)
                             : convs_[0]->forward(normalized, Variable(x.dense));
  for (size_t l = 1; l < convs_.size(); ++l) {
    h = convs_[l]->forward(normalized, dropout(relu(h), dropout_, training(), generator));
  }
  return h;
}

std::vector<Variable> GcnLinkEncoder::parameters() const { return parameter_values(named_parameters()); }

NamedParameters GcnLinkEncoder::named_parameters() const {
  NamedParameters out;
  for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(out, "convs." + std::to_string(l), *convs_[l]);
  return out;
}

std::string GcnLinkEncoder::describe() const {
  std::string s = "gcn[";
  for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
  return s + "], dropout " + std::to_string(dropout_) + " between layers";
}

}  // namespace edgewise::gnn::link_detail
