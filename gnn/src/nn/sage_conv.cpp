// SAGEConv: aggregate neighbours (mean / sum / max-pool / var / std), transform, add the root term.
#include "edgewise/gnn/nn/sage_conv.hpp"

#include <type_traits>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

SageAggregator parse_sage_aggregator(const std::string& name) {
  if (name == "mean") return SageAggregator::Mean;
  if (name == "sum" || name == "add") return SageAggregator::Sum;
  if (name == "max" || name == "maxpool" || name == "max_pool") return SageAggregator::MaxPool;
  if (name == "var") return SageAggregator::Var;
  if (name == "std") return SageAggregator::Std;
  detail::throw_invalid_argument("SAGEConv: unknown aggregator '", name, "' (expected mean, sum, max, var or std)");
}

SAGEConv::SAGEConv(int64_t in_features, int64_t out_features, Generator& generator, SAGEConvOptions options,
                   Device device)
    : options_(options),
      in_features_(in_features),
      out_features_(out_features),
      lin_l_(in_features, out_features, generator, options.bias, WeightInit::LinearDefault, device) {
  if (options.root_weight) {
    lin_r_ = std::make_unique<Linear>(in_features, out_features, generator, false, WeightInit::LinearDefault, device);
  }
  if (options.aggregator == SageAggregator::MaxPool) {
    project_ = std::make_unique<Linear>(in_features, in_features, generator, true, WeightInit::LinearDefault, device);
  }
}

namespace {
Variable project(const Variable& x, const Variable& w) { return matmul(x, w); }
Variable project(const SparseTensor& x, const Variable& w) { return sparse_matmul(x, w); }
}  // namespace

template <class X>
Variable SAGEConv::combine(const Graph& graph, const X& x) const {
  AggregationOptions agg = options_.aggregation;
  Variable out;
  if (options_.aggregator == SageAggregator::MaxPool) {
    Variable h = relu(add_bias(project(x, project_->weight()), project_->bias()));
    agg.op = ReduceOp::Max;
    out = lin_l_.forward(aggregate(graph, h, agg));
  } else if (options_.aggregator == SageAggregator::Var || options_.aggregator == SageAggregator::Std) {
    // Not linear in x: aggregate first, then transform (as PyG does).
    agg.op = options_.aggregator == SageAggregator::Var ? ReduceOp::Var : ReduceOp::Std;
    if constexpr (std::is_same_v<X, SparseTensor>) {
      detail::throw_invalid_argument("SAGEConv: aggregator ", to_string(agg.op),
                                     " needs dense features (x is sparse)");
    } else {
      out = lin_l_.forward(aggregate(graph, x, agg));
    }
  } else {
    // mean/sum are linear: aggregate(x) W == aggregate(x W); transform first when it
    // shrinks the rows that travel along edges (and always for sparse x).
    agg.op = options_.aggregator == SageAggregator::Mean ? ReduceOp::Mean : ReduceOp::Sum;
    constexpr bool kSparse = std::is_same_v<X, SparseTensor>;
    if (kSparse || out_features_ < in_features_) {
      out = aggregate(graph, project(x, lin_l_.weight()), agg);
      if (lin_l_.bias().defined()) out = add_bias(out, lin_l_.bias());
    } else {
      if constexpr (!kSparse) out = lin_l_.forward(aggregate(graph, x, agg));
    }
  }
  if (lin_r_) out = add(out, project(x, lin_r_->weight()));
  if (options_.normalize) out = l2_normalize(out);
  return out;
}

Variable SAGEConv::forward(const Graph& graph, const Variable& x) const { return combine(graph, x); }
Variable SAGEConv::forward(const Graph& graph, const SparseTensor& x) const { return combine(graph, x); }

NamedParameters SAGEConv::named_parameters() const {
  NamedParameters named;
  append_named_parameters(named, "lin_l", lin_l_);
  if (lin_r_) append_named_parameters(named, "lin_r", *lin_r_);
  if (project_) append_named_parameters(named, "lin", *project_);  // PyG's name for the pooling projection
  return named;
}

std::vector<Variable> SAGEConv::parameters() const { return parameter_values(named_parameters()); }

std::string SAGEConv::describe() const {
  const char* names[] = {"mean", "sum", "max-pool", "var", "std"};
  return "SAGEConv(" + std::to_string(in_features_) + " -> " + std::to_string(out_features_) + ", " +
         names[static_cast<int>(options_.aggregator)] + (options_.normalize ? ", l2-normalised" : "") + ")";
}

}  // namespace edgewise::gnn
