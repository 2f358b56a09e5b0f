// GINConv: (1 + eps) h + sum of neighbours' h, with h = x W1 taken before the sum.
#include "edgewise/gnn/nn/gin_conv.hpp"

#include "edgewise/gnn/autograd/functional.hpp"

namespace edgewise::gnn {

GINConv::GINConv(int64_t in_features, int64_t hidden_features, int64_t out_features, Generator& generator,
                 GINConvOptions options, Device device)
    : options_(options),
      lin1_(in_features, hidden_features, generator, true, WeightInit::LinearDefault, device),
      lin2_(hidden_features, out_features, generator, true, WeightInit::LinearDefault, device) {
  options_.aggregation.op = ReduceOp::Sum;
  eps_ = Variable(Tensor::full(1, 1, options.eps, device), options.train_eps, "gin.eps");
}

Variable GINConv::combine(const Graph& graph, const Variable& h) const {
  return add(scale_by(h, eps_, 1.0f), aggregate(graph, h, options_.aggregation));
}

Variable GINConv::mlp_tail(const Variable& pre) const { return lin2_.forward(relu(add_bias(pre, lin1_.bias()))); }

// mlp((1+eps) x + sum x_j) = lin2(relu(((1+eps) x W1 + sum x_j W1) + b1)): W1 is linear.
Variable GINConv::forward(const Graph& graph, const Variable& x) const {
  return mlp_tail(combine(graph, matmul(x, lin1_.weight())));
}

Variable GINConv::forward(const Graph& graph, const SparseTensor& x) const {
  return mlp_tail(combine(graph, sparse_matmul(x, lin1_.weight())));
}

NamedParameters GINConv::named_parameters() const {
  NamedParameters named;
  // PyG's names: the MLP is nn = Sequential(Linear, ReLU, Linear).
  append_named_parameters(named, "nn.0", lin1_);
  append_named_parameters(named, "nn.2", lin2_);
  if (options_.train_eps) named.emplace_back("eps", eps_);
  return named;
}

std::vector<Variable> GINConv::parameters() const { return parameter_values(named_parameters()); }

std::string GINConv::describe() const {
  return "GINConv(" + std::to_string(lin1_.in_features()) + " -> " + std::to_string(lin1_.out_features()) + " -> " +
         std::to_string(lin2_.out_features()) + (options_.train_eps ? ", learnable eps" : "") + ")";
}

}  // namespace edgewise::gnn
