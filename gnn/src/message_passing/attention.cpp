// Autograd ops for attention layers, on the sddmm / edge_softmax / edge_gather_sum
// primitives (the graph was validated at construction: kernels run trusted).
#include "edgewise/gnn/message_passing/attention.hpp"

#include <span>
#include <type_traits>
#include <vector>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/edge_softmax.hpp"
#include "edgewise/kernels/sddmm.hpp"
#include "tensor/activations_backends.hpp"

namespace edgewise::gnn {

namespace {

using ops::Activation;

Context& context_for(Device device) { return engine_context(device); }

template <class N, class... Inputs>
std::shared_ptr<N> make_node(const Inputs&... inputs) {
  auto node = std::make_shared<N>();
  node->inputs = {inputs...};
  return node;
}

void require_on(const char* op, const char* name, const Variable& v, Device device) {
  EW_REQUIRE(v.device() == device, op, ": ", name, " is on ", v.device().str(), " but the graph is on ",
             device.str());
}

void run_activation(Activation kind, float param, const Tensor& x, Tensor& y) {
  if (x.device().is_cpu()) {
    ops::cpu::activation(kind, param, x, y);
  } else {
#if EDGEWISE_WITH_CUDA
    ops::cuda::activation(kind, param, x, y);
#else
    detail::throw_invalid_argument(kind == Activation::Elu ? "elu" : "leaky_relu", ": edgewise was built without CUDA");
#endif
  }
}

void run_activation_backward(Activation kind, float param, const Tensor& x, const Tensor& g, Tensor& gx) {
  if (x.device().is_cpu()) {
    ops::cpu::activation_backward(kind, param, x, g, gx);
  } else {
#if EDGEWISE_WITH_CUDA
    ops::cuda::activation_backward(kind, param, x, g, gx);
#else
    detail::throw_invalid_argument("activation backward: edgewise was built without CUDA");
#endif
  }
}

struct ActivationNode : Node {
  Activation kind = Activation::LeakyRelu;
  float param = 0;
  const char* name() const override { return kind == Activation::Elu ? "elu" : "leaky_relu"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    run_activation_backward(kind, param, inputs[0].value(), g, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

Variable activation(Activation kind, float param, const Variable& x) {
  Tensor y(x.rows(), x.cols(), x.device());
  run_activation(kind, param, x.value(), y);
  auto node = make_node<ActivationNode>(x);
  node->kind = kind;
  node->param = param;
  return record(y, node);
}

// head_dot as a one-destination sddmm: rows n of x are the edges n -> 0 of a graph whose
// only destination row holds att. Its transpose (each row n its own source with one
// edge to destination 0) gives dL/dx.
struct HeadGraph {
  Buffer<int64_t> star_offsets;  // [2]: {0, N}: every row an edge into destination 0
  Buffer<int32_t> rows;          // [N]: 0..N-1, the source of edge n
  Buffer<int64_t> row_offsets;   // [N + 1]: 0..N, row n's single transposed edge
  Buffer<int32_t> zeros;         // [N]: the destination (0) of every transposed edge
};

HeadGraph head_graph(int64_t n, Device device) {
  EW_REQUIRE(n < (int64_t{1} << 31), "head_dot: x has ", n, " rows (at most 2^31 - 1)");
  std::vector<int64_t> star{0, n}, row_offsets(static_cast<size_t>(n + 1));
  std::vector<int32_t> rows(static_cast<size_t>(n)), zeros(static_cast<size_t>(n), 0);
  for (int64_t i = 0; i <= n; ++i) row_offsets[static_cast<size_t>(i)] = i;
  for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  auto up = [&](const auto& host) {
    using T = typename std::decay_t<decltype(host)>::value_type;
    return Buffer<T>::from_host(std::span<const T>(host.data(), host.size()), device);
  };
  return {up(star), up(rows), up(row_offsets), up(zeros)};
}

struct HeadDotNode : Node {
  HeadGraph g;
  const char* name() const override { return "head_dot"; }
  void backward(const Tensor& grad) override {
    const Variable& x = inputs[0];
    const Variable& att = inputs[1];
    Context& ctx = context_for(grad.device());
    if (x.requires_grad()) {
      Tensor gx(x.rows(), x.cols(), grad.device());
      edge_gather_sum<float, int32_t>(g.row_offsets.view(), g.zeros.view(), {}, grad.cview(), att.value().cview(),
                                      gx.view(), ctx);
      inputs[0].accumulate_grad(std::move(gx));
    }
    if (att.requires_grad()) {
      Tensor ga(1, att.cols(), grad.device());
      edge_gather_sum<float, int32_t>(g.star_offsets.view(), g.rows.view(), {}, grad.cview(), x.value().cview(),
                                      ga.view(), ctx);
      inputs[1].accumulate_grad(std::move(ga));
    }
  }
};

struct EdgeScoreAddNode : Node {
  Graph graph;
  const char* name() const override { return "edge_score_add"; }
  void backward(const Tensor& g) override {
    Context& ctx = context_for(g.device());
    if (inputs[0].requires_grad()) {
      const TransposedCsr& t = graph.transposed();
      Tensor ga(inputs[0].rows(), inputs[0].cols(), g.device());
      edge_gather_sum<float, int32_t>(t.offsets.view(), {}, t.edge_ids.view(), g.cview(), {}, ga.view(), ctx);
      inputs[0].accumulate_grad(std::move(ga));
    }
    if (inputs[1].requires_grad()) {
      Tensor gb(inputs[1].rows(), inputs[1].cols(), g.device());
      edge_gather_sum<float, int32_t>(graph.offsets().view(), {}, {}, g.cview(), {}, gb.view(), ctx);
      inputs[1].accumulate_grad(std::move(gb));
    }
  }
};

struct EdgeSoftmaxNode : Node {
  Graph graph;
  Tensor output;
  const char* name() const override { return "edge_softmax"; }
  void backward(const Tensor& g) override {
    Tensor gs(g.rows(), g.cols(), g.device());
    edge_softmax_backward<float>(graph.offsets().view(), output.cview(), g.cview(), gs.view(), context_for(g.device()));
    inputs[0].accumulate_grad(std::move(gs));
  }
};

struct AttentionAggregateNode : Node {
  Graph graph;
  const char* name() const override { return "attention_aggregate"; }
  void backward(const Tensor& g) override {
    const Variable& alpha = inputs[0];
    const Variable& x = inputs[1];
    Context& ctx = context_for(g.device());
    if (x.requires_grad()) {
      const TransposedCsr& t = graph.transposed();
      Tensor gx(x.rows(), x.cols(), g.device());
      edge_gather_sum<float, int32_t>(t.offsets.view(), t.destinations.view(), t.edge_ids.view(), alpha.value().cview(),
                                      g.cview(), gx.view(), ctx);
      inputs[1].accumulate_grad(std::move(gx));
    }
    if (alpha.requires_grad()) {
      Tensor galpha(alpha.rows(), alpha.cols(), g.device());
      sddmm_dot<float, int32_t>(graph.offsets().view(), graph.sources().view(), x.value().cview(), g.cview(),
                                galpha.view(), ctx);
      inputs[0].accumulate_grad(std::move(galpha));
    }
  }
};

}  // namespace

Variable leaky_relu(const Variable& x, float negative_slope) {
  return activation(Activation::LeakyRelu, negative_slope, x);
}

Variable elu(const Variable& x, float alpha) { return activation(Activation::Elu, alpha, x); }

Variable head_dot(const Variable& x, const Variable& att, int64_t heads) {
  constexpr const char* kOp = "head_dot";
  EW_REQUIRE(heads >= 1 && x.cols() % heads == 0 && x.cols() > 0, kOp, ": x.cols() (", x.cols(),
             ") must be a positive multiple of heads (", heads, ")");
  EW_REQUIRE(att.rows() == 1 && att.cols() == x.cols(), kOp, ": att ", att.value().shape_str(), " must be [1, ",
             x.cols(), "]");
  require_on(kOp, "att", att, x.device());
  auto node = make_node<HeadDotNode>(x, att);
  node->g = head_graph(x.rows(), x.device());
  Tensor y(x.rows(), heads, x.device());
  sddmm_dot<float, int32_t>(node->g.star_offsets.view(), node->g.rows.view(), x.value().cview(), att.value().cview(),
                            y.view(), context_for(x.device()));
  return record(y, node);
}

Variable head_mean(const Variable& x, int64_t heads) {
  EW_REQUIRE(heads >= 1 && x.cols() % heads == 0 && x.cols() > 0, "head_mean: x.cols() (", x.cols(),
             ") must be a positive multiple of heads (", heads, ")");
  if (heads == 1) return x;
  const int64_t d = x.cols() / heads;
  // [H*D, D] stacked identities / H: x @ m averages the heads.
  std::vector<float> m(static_cast<size_t>(x.cols() * d), 0.0f);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t j = 0; j < d; ++j) m[static_cast<size_t>((h * d + j) * d + j)] = 1.0f / static_cast<float>(heads);
  }
  return matmul(x, Variable(Tensor::from_host(m, x.cols(), d, x.device())));
}

Variable edge_score_add(const Graph& graph, const Variable& a_src, const Variable& a_dst) {
  constexpr const char* kOp = "edge_score_add";
  EW_REQUIRE(a_src.rows() == graph.num_nodes() && a_dst.rows() == graph.num_nodes() && a_src.cols() == a_dst.cols(),
             kOp, ": a_src ", a_src.value().shape_str(), " and a_dst ", a_dst.value().shape_str(), " must both be [",
             graph.num_nodes(), ", H]");
  require_on(kOp, "a_src", a_src, graph.device());
  require_on(kOp, "a_dst", a_dst, graph.device());
  Tensor y(graph.num_edges(), a_src.cols(), graph.device());
  sddmm_add<float, int32_t>(graph.offsets().view(), graph.sources().view(), a_src.value().cview(),
                            a_dst.value().cview(), y.view(), context_for(graph.device()));
  auto node = make_node<EdgeScoreAddNode>(a_src, a_dst);
  node->graph = graph;
  return record(y, node);
}

Variable edge_softmax(const Graph& graph, const Variable& scores) {
  EW_REQUIRE(scores.rows() == graph.num_edges() && scores.cols() >= 1, "edge_softmax: scores ",
             scores.value().shape_str(), " must be [", graph.num_edges(), ", H]");
  require_on("edge_softmax", "scores", scores, graph.device());
  Tensor y(scores.rows(), scores.cols(), graph.device());
  edge_softmax<float>(graph.offsets().view(), scores.value().cview(), y.view(), context_for(graph.device()));
  auto node = make_node<EdgeSoftmaxNode>(scores);
  node->graph = graph;
  node->output = y;
  return record(y, node);
}

Variable attention_aggregate(const Graph& graph, const Variable& alpha, const Variable& x) {
  constexpr const char* kOp = "attention_aggregate";
  EW_REQUIRE(alpha.rows() == graph.num_edges() && alpha.cols() >= 1, kOp, ": alpha ", alpha.value().shape_str(),
             " must be [", graph.num_edges(), ", H]");
  EW_REQUIRE(x.rows() == graph.num_nodes() && x.cols() % alpha.cols() == 0 && x.cols() > 0, kOp, ": x ",
             x.value().shape_str(), " must be [", graph.num_nodes(), ", H*D] with H = ", alpha.cols());
  require_on(kOp, "alpha", alpha, graph.device());
  require_on(kOp, "x", x, graph.device());
  Tensor y(graph.num_nodes(), x.cols(), graph.device());
  edge_gather_sum<float, int32_t>(graph.offsets().view(), graph.sources().view(), {}, alpha.value().cview(),
                                  x.value().cview(), y.view(), context_for(graph.device()));
  auto node = make_node<AttentionAggregateNode>(alpha, x);
  node->graph = graph;
  return record(y, node);
}

}  // namespace edgewise::gnn
