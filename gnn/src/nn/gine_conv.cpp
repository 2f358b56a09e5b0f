// GINEConv: per-edge messages ReLU(x_j + lin(e_ji)) summed by destination, then GIN's update.
#include "edgewise/gnn/nn/gine_conv.hpp"

#include "edgewise/gnn/message_passing/edge_messages.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {
constexpr const char* kOp = "GINEConv";
}  // namespace

GINEConv::GINEConv(int64_t in_features, int64_t hidden_features, int64_t out_features, Generator& generator,
                   GINEConvOptions options, Device device)
    : options_(options),
      in_features_(in_features),
      lin1_(in_features, hidden_features, generator, true, WeightInit::LinearDefault, device),
      lin2_(hidden_features, out_features, generator, true, WeightInit::LinearDefault, device) {
  EW_REQUIRE(options.edge_dim >= 0, kOp, ": edge_dim (", options.edge_dim, ") must be >= 0 (0: no edge projection)");
  options_.aggregation.op = ReduceOp::Sum;
  if (options.edge_dim > 0) {
    edge_lin_.emplace(options.edge_dim, in_features, generator, true, WeightInit::LinearDefault, device);
  }
  eps_ = Variable(Tensor::full(1, 1, options.eps, device), options.train_eps, "gine.eps");
}

Variable GINEConv::forward(const Graph& graph, const Variable& x) const {
  EW_REQUIRE(graph.has_edge_attr(), kOp, ": the graph has no edge features (attach them with Graph::with_edge_attr)");
  EW_REQUIRE(x.cols() == in_features_, kOp, ": x has ", x.cols(), " columns but the layer takes ", in_features_);
  const Tensor& attr = graph.edge_attr();
  const int64_t want = options_.edge_dim > 0 ? options_.edge_dim : in_features_;
  EW_REQUIRE(attr.cols() == want, kOp, ": the graph's edge features have ", attr.cols(), " columns but the layer ",
             options_.edge_dim > 0 ? "was built with edge_dim " : "(no edge_dim) needs in_features = ", want);
  Variable edge_term(attr);
  if (edge_lin_) edge_term = edge_lin_->forward(edge_term);
  const Variable messages = relu(add(gather_sources(graph, x), edge_term));
  const Variable combined = add(scale_by(x, eps_, 1.0f), aggregate_messages(graph, messages, options_.aggregation));
  return lin2_.forward(relu(lin1_.forward(combined)));
}

NamedParameters GINEConv::named_parameters() const {
  NamedParameters named;
  append_named_parameters(named, "nn.0", lin1_);
  append_named_parameters(named, "nn.2", lin2_);
  if (edge_lin_) append_named_parameters(named, "lin", *edge_lin_);
  if (options_.train_eps) named.emplace_back("eps", eps_);
  return named;
}

std::vector<Variable> GINEConv::parameters() const { return parameter_values(named_parameters()); }

std::string GINEConv::describe() const {
  return "GINEConv(" + std::to_string(in_features_) + " -> " + std::to_string(lin1_.out_features()) + " -> " +
         std::to_string(lin2_.out_features()) + ", edge_dim " + std::to_string(options_.edge_dim) +
         (options_.train_eps ? ", learnable eps" : "") + ")";
}

}  // namespace edgewise::gnn
