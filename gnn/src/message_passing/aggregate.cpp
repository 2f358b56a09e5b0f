// Aggregation forward/backward on the tape, built from the kernels' spmm,
// segment_reduce and scatter_reduce (see aggregate.hpp for the strategy model).
#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/message_passing/aggregate_strategy.hpp"

#include <atomic>
#include <numeric>
#include <utility>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/reduce_backward.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::gnn {

namespace {

std::atomic<bool> g_deterministic{false};
constexpr const char* kOp = "aggregate";

// The graph was validated when it was built: kernels trust it (no per-call checks).
Context& context_for(Device device) { return engine_context(device); }

VectorView<const float> weights_of(const Graph& graph, const AggregationOptions& options, const Variable& edge_weight) {
  if (edge_weight.defined()) return edge_weight.value().cflat();
  if (options.use_edge_weight && graph.has_edge_weight()) return graph.edge_weight().cflat();
  return {};
}

// d loss / d x for every op, through the transposed CSR.
Tensor grad_wrt_x(const Graph& graph, ReduceOp op, VectorView<const float> weights, const Tensor& grad_out,
                  const IndexTensor& arg) {
  const TransposedCsr& t = graph.transposed();
  Tensor grad_x(graph.num_nodes(), grad_out.cols(), grad_out.device());
  Context& ctx = context_for(grad_out.device());
  if (has_arg(op)) {
    spmm_arg_backward<float, int32_t>(t.offsets.view(), t.destinations.view(), t.edge_ids.view(), weights,
                                      grad_out.cview(), arg.cview(), grad_x.view(), ctx);
  } else {
    spmm_backward<float, int32_t>(t.offsets.view(), t.destinations.view(), t.edge_ids.view(), weights,
                                  grad_out.cview(), op, graph.offsets().view(), grad_x.view(), ctx);
  }
  return grad_x;
}

struct AggregateNode : Node {
  Graph graph;
  ReduceOp op = ReduceOp::Sum;
  bool weighted_by_variable = false;  // inputs[1] is the edge-weight Variable
  VectorView<const float> weights;    // valid while graph / inputs[1] are alive
  IndexTensor arg;                    // min/max: the winning CSR edge per output element
  const char* name() const override { return "aggregate"; }
  Tensor out;                         // ops whose gradient needs the forward (mul, var, std)
  void backward(const Tensor& g) override {
    if (!spmm_has_backward(op)) return backward_from_forward(g);
    if (inputs[0].requires_grad()) inputs[0].accumulate_grad(grad_wrt_x(graph, op, weights, g, arg));
    if (weighted_by_variable && inputs[1].requires_grad()) {
      Tensor grad_w(graph.num_edges(), 1, g.device());
      spmm_weight_backward<float, int32_t>(graph.offsets().view(), graph.sources().view(), inputs[0].value().cview(),
                                           g.cview(), op, arg.cview(), grad_w.flat(), context_for(g.device()));
      inputs[1].accumulate_grad(std::move(grad_w));
    }
  }
  // dL/dx and dL/dw in one pass over the messages (spmm_full_backward).
  void backward_from_forward(const Tensor& g) {
    const bool want_w = weighted_by_variable && inputs[1].requires_grad();
    if (!inputs[0].requires_grad() && !want_w) return;
    const TransposedCsr& t = graph.transposed();
    const Tensor& x = inputs[0].value();
    Tensor grad_x(graph.num_nodes(), g.cols(), g.device());
    Tensor grad_w;
    if (want_w) grad_w = Tensor(graph.num_edges(), 1, g.device());
    spmm_full_backward<float, int32_t>(graph.offsets().view(), graph.sources().view(), weights, x.cview(), op,
                                       out.cview(), arg.cview(), g.cview(), t.offsets.view(), t.edge_ids.view(),
                                       grad_x.view(), want_w ? grad_w.flat() : VectorView<float>(),
                                       context_for(g.device()));
    if (inputs[0].requires_grad()) inputs[0].accumulate_grad(std::move(grad_x));
    if (want_w) inputs[1].accumulate_grad(std::move(grad_w));
  }
};

// Per-edge messages [E, C] (CSR order) -> grad: a gather of grad_out by destination.
struct MessagesNode : Node {
  Graph graph;
  ReduceOp op = ReduceOp::Sum;
  IndexTensor arg;
  Tensor out;  // ops whose gradient needs the forward (mul, var, std)
  const char* name() const override { return "aggregate_messages"; }
  void backward(const Tensor& g) override {
    const int64_t E = graph.num_edges();
    Tensor grad_m(E, g.cols(), g.device());
    Context& ctx = context_for(g.device());
    if (!spmm_has_backward(op)) {
      segment_reduce_backward<float>(inputs[0].value().cview(), graph.offsets().view(), op, out.cview(), arg.cview(),
                                     g.cview(), grad_m.view(), ctx);
      inputs[0].accumulate_grad(std::move(grad_m));
      return;
    }
    const Buffer<int64_t>& rows = graph.edge_offsets();  // every edge its own row
    // Message e is "source" e with one edge to its destination: the transposed CSR of
    // the message graph is the identity, so the forward edge id of message e is e.
    VectorView<const int64_t> edge_ids(rows.data(), E, g.device());
    if (has_arg(op)) {
      spmm_arg_backward<float, int32_t>(rows.view(), graph.destinations().view(), edge_ids, {}, g.cview(),
                                        arg.cview(), grad_m.view(), ctx);
    } else {
      spmm_backward<float, int32_t>(rows.view(), graph.destinations().view(), edge_ids, {}, g.cview(), op,
                                    graph.offsets().view(), grad_m.view(), ctx);
    }
    inputs[0].accumulate_grad(std::move(grad_m));
  }
};

// out = reduce over messages by destination, with the resolved strategy.
void reduce_messages(const Graph& graph, const Tensor& messages, ReduceOp op, AggregationStrategy strategy,
                     Tensor& out, IndexTensor& arg) {
  Context& ctx = context_for(messages.device());
  MatrixView<int64_t> arg_view = has_arg(op) ? arg.view() : MatrixView<int64_t>();
  if (strategy == AggregationStrategy::Scatter) {
    scatter_reduce<float, int32_t>(messages.cview(), graph.destinations().view(), op, out.view(), arg_view, ctx);
  } else {
    segment_reduce<float>(messages.cview(), graph.offsets().view(), op, out.view(), arg_view, ctx);
  }
}

}  // namespace

void set_deterministic(bool on) noexcept { g_deterministic = on; }
bool deterministic() noexcept { return g_deterministic; }

AggregationStrategy parse_strategy(const std::string& name) {
  if (name == "auto") return AggregationStrategy::Auto;
  if (name == "segment" || name == "csr") return AggregationStrategy::Segment;
  if (name == "scatter" || name == "atomic") return AggregationStrategy::Scatter;
  detail::throw_invalid_argument("aggregation strategy: unknown '", name, "' (expected auto, segment or scatter)");
}

AggregationStrategy resolve_strategy(const AggregationOptions& options, Device device) {
  const bool want_deterministic = options.deterministic || deterministic();
  if (options.strategy == AggregationStrategy::Scatter) {
    EW_REQUIRE(!(want_deterministic && device.is_cuda()), kOp,
               ": the Scatter strategy is not bitwise reproducible on CUDA, but determinism was requested");
    return AggregationStrategy::Scatter;
  }
  // A Graph always carries its CSR: Segment is reproducible and atomic-free.
  return AggregationStrategy::Segment;
}

Variable aggregate(const Graph& graph, const Variable& x, const AggregationOptions& options, const Variable& edge_weight) {
  EW_REQUIRE(x.rows() == graph.num_nodes(), kOp, ": x has ", x.rows(), " rows for a graph of ", graph.num_nodes(),
             " nodes");
  EW_REQUIRE(x.device() == graph.device(), kOp, ": x is on ", x.device().str(), " but the graph is on ",
             graph.device().str());
  if (edge_weight.defined()) {
    EW_REQUIRE(edge_weight.value().numel() == graph.num_edges(), kOp, ": edge_weight has ",
               edge_weight.value().numel(), " values for ", graph.num_edges(), " edges");
  }
  const VectorView<const float> weights = weights_of(graph, options, edge_weight);
  const AggregationChoice choice = choose_aggregation(graph, x.value().cview(), weights, options);
  const AggregationStrategy strategy = choice.strategy;
  const int64_t N = graph.num_nodes(), C = x.cols();
  Tensor out(N, C, x.device());
  IndexTensor arg;
  if (has_arg(options.op)) arg = IndexTensor(N, C, x.device());
  Context& ctx = context_for(x.device());
  if (choice.form == MessageForm::Fused && strategy == AggregationStrategy::Segment) {
    spmm<float, int32_t>(graph.offsets().view(), graph.sources().view(), weights, x.value().cview(), options.op,
                         out.view(), has_arg(options.op) ? arg.view() : MatrixView<int64_t>(), ctx);
  } else {
    // Materialise w_e * x[src_e] as [E, C] (an spmm with one edge per row), then reduce.
    const int64_t E = graph.num_edges();
    Tensor messages(E, C, x.device());
    const Buffer<int64_t>& rows = graph.edge_offsets();  // every edge its own row: a weighted gather
    spmm<float, int32_t>(rows.view(), graph.sources().view(), weights, x.value().cview(), ReduceOp::Sum,
                         messages.view(), {}, ctx);
    reduce_messages(graph, messages, options.op, strategy, out, arg);
  }
  auto node = std::make_shared<AggregateNode>();
  node->inputs = {x};
  if (edge_weight.defined()) {
    node->inputs.push_back(edge_weight);
    node->weighted_by_variable = true;
  }
  node->graph = graph;
  node->op = options.op;
  node->weights = weights;
  node->arg = arg;
  if (!spmm_has_backward(options.op)) node->out = out;
  return record(out, node);
}

Variable aggregate_messages(const Graph& graph, const Variable& messages, const AggregationOptions& options) {
  EW_REQUIRE(messages.rows() == graph.num_edges(), "aggregate_messages: messages has ", messages.rows(),
             " rows for ", graph.num_edges(), " edges");
  EW_REQUIRE(messages.device() == graph.device(), "aggregate_messages: messages are on ", messages.device().str(),
             " but the graph is on ", graph.device().str());
  const AggregationStrategy strategy = choose_message_reduction(graph, messages.cols(), options);
  Tensor out(graph.num_nodes(), messages.cols(), messages.device());
  IndexTensor arg;
  if (has_arg(options.op)) arg = IndexTensor(graph.num_nodes(), messages.cols(), messages.device());
  reduce_messages(graph, messages.value(), options.op, strategy, out, arg);
  auto node = std::make_shared<MessagesNode>();
  node->inputs = {messages};
  node->graph = graph;
  node->op = options.op;
  node->arg = arg;
  if (!spmm_has_backward(options.op)) node->out = out;
  return record(out, node);
}

}  // namespace edgewise::gnn
