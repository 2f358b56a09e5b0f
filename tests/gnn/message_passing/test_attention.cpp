// Attention ops (leaky_relu, elu, head_dot, head_mean, edge_score_add, edge_softmax,
// attention_aggregate) gradient-checked against double references, and GATConv /
// GATv2Conv / the GAT model: forward against the PyG formula in double, every
// parameter's gradient against finite differences, attention dropout, self loops.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "edgewise/gnn/message_passing/attention.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gat_conv.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Graph;
using gnn::Tensor;
using gnn::Variable;

using AttentionTest = DeviceTest;

// 6 nodes: node 0 a hub (4 in-edges, a duplicate), node 4 without in-edges, a self loop on 5.
struct SmallGraph {
  std::vector<int64_t> src{1, 2, 3, 3, 0, 0, 5, 2, 4};
  std::vector<int64_t> dst{0, 0, 0, 0, 1, 2, 5, 3, 3};
  int64_t n = 6;
  Graph on(Device device) const { return Graph::from_coo(src, dst, n).to(device); }
};

// The CSR-order edges of a graph (src, dst) for references.
struct Edges {
  std::vector<int64_t> src, dst;
};
Edges edges_of(const Graph& g) {
  auto [s, d] = g.coo();
  return {s, d};
}

Flat softmax_by_destination(const Flat& scores, const Edges& e, int64_t n, int64_t heads) {
  Flat out(scores.size());
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t h = 0; h < heads; ++h) {
      double m = -1e300, total = 0;
      for (size_t k = 0; k < e.dst.size(); ++k)
        if (e.dst[k] == v) m = std::max(m, scores[k * heads + h]);
      for (size_t k = 0; k < e.dst.size(); ++k)
        if (e.dst[k] == v) total += std::exp(scores[k * heads + h] - m);
      for (size_t k = 0; k < e.dst.size(); ++k)
        if (e.dst[k] == v) out[k * heads + h] = std::exp(scores[k * heads + h] - m) / total;
    }
  }
  return out;
}

TEST_P(AttentionTest, LeakyReluAndEluGradients) {
  for (auto [lo, hi] : {std::pair{0.01, 1.0}, std::pair{-1.0, -0.01}}) {
    GradCase lrelu{"leaky_relu",
                   {{5, 3}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::leaky_relu(v[0], 0.2f); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     for (double& e : y) e = e > 0 ? e : 0.2 * e;
                     return y;
                   },
                   lo, hi};
    check_gradients(lrelu, device(), 31);
    GradCase elu{"elu",
                 {{5, 3}},
                 {},
                 [](const std::vector<Variable>& v) { return gnn::elu(v[0], 1.5f); },
                 [](const std::vector<Flat>& x) {
                   Flat y = x[0];
                   for (double& e : y) e = e > 0 ? e : 1.5 * std::expm1(e);
                   return y;
                 },
                 lo, hi};
    check_gradients(elu, device(), 32);
  }
}

TEST_P(AttentionTest, HeadDotAndHeadMeanGradients) {
  const int64_t N = 5, H = 3, D = 4;
  check_gradients({"head_dot",
                   {{N, H * D}, {1, H * D}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::head_dot(v[0], v[1], H); },
                   [=](const std::vector<Flat>& x) {
                     Flat y(static_cast<size_t>(N * H), 0.0);
                     for (int64_t n = 0; n < N; ++n)
                       for (int64_t c = 0; c < H * D; ++c) y[n * H + c / D] += x[0][n * H * D + c] * x[1][c];
                     return y;
                   }},
                  device(), 33);
  check_gradients({"head_mean",
                   {{N, H * D}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::head_mean(v[0], H); },
                   [=](const std::vector<Flat>& x) {
                     Flat y(static_cast<size_t>(N * D), 0.0);
                     for (int64_t n = 0; n < N; ++n)
                       for (int64_t c = 0; c < H * D; ++c) y[n * D + c % D] += x[0][n * H * D + c] / H;
                     return y;
                   }},
                  device(), 34);
}

TEST_P(AttentionTest, EdgeOpsGradients) {
  const SmallGraph sg;
  const Graph g = sg.on(device());
  const Edges e = edges_of(g);
  const int64_t N = sg.n, E = g.num_edges(), H = 2, D = 3;
  check_gradients({"edge_score_add",
                   {{N, H}, {N, H}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::edge_score_add(g, v[0], v[1]); },
                   [=](const std::vector<Flat>& x) {
                     Flat y(static_cast<size_t>(E * H));
                     for (int64_t k = 0; k < E; ++k)
                       for (int64_t h = 0; h < H; ++h) y[k * H + h] = x[0][e.src[k] * H + h] + x[1][e.dst[k] * H + h];
                     return y;
                   }},
                  device(), 35);
  check_gradients({"edge_softmax",
                   {{E, H}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::edge_softmax(g, v[0]); },
                   [=](const std::vector<Flat>& x) { return softmax_by_destination(x[0], e, N, H); },
                   -3, 3},
                  device(), 36);
  check_gradients({"attention_aggregate",
                   {{E, H}, {N, H * D}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::attention_aggregate(g, v[0], v[1]); },
                   [=](const std::vector<Flat>& x) {
                     Flat y(static_cast<size_t>(N * H * D), 0.0);
                     for (int64_t k = 0; k < E; ++k)
                       for (int64_t c = 0; c < H * D; ++c)
                         y[e.dst[k] * H * D + c] += x[0][k * H + c / D] * x[1][e.src[k] * H * D + c];
                     return y;
                   }},
                  device(), 37);
}

// PyG's GATConv (v1) or GATv2Conv in double. params: v1 {W, att_src, att_dst, bias};
// v2 {W_l, b_l, W_r, b_r, att, bias}.
Flat gat_ref(bool v2, const Flat& x, const std::vector<Flat>& p, const Edges& e, int64_t N, int64_t F, int64_t H,
             int64_t C, bool concat, double slope) {
  const int64_t HC = H * C;
  auto lin = [&](const Flat& w, const Flat* b) {
    Flat y(static_cast<size_t>(N * HC), 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < HC; ++c) {
        double acc = b ? (*b)[c] : 0.0;
        for (int64_t f = 0; f < F; ++f) acc += x[n * F + f] * w[f * HC + c];
        y[n * HC + c] = acc;
      }
    return y;
  };
  auto lrelu = [&](double z) { return z > 0 ? z : slope * z; };
  const int64_t E = static_cast<int64_t>(e.src.size());
  Flat scores(static_cast<size_t>(E * H), 0.0), values;
  if (!v2) {
    values = lin(p[0], nullptr);
    for (int64_t k = 0; k < E; ++k)
      for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          s += values[e.src[k] * HC + h * C + c] * p[1][h * C + c] + values[e.dst[k] * HC + h * C + c] * p[2][h * C + c];
        scores[k * H + h] = lrelu(s);
      }
  } else {
    values = lin(p[0], &p[1]);
    const Flat xr = lin(p[2], &p[3]);
    for (int64_t k = 0; k < E; ++k)
      for (int64_t h = 0; h < H; ++h) {
        double s = 0;
        for (int64_t c = 0; c < C; ++c)
          s += lrelu(values[e.src[k] * HC + h * C + c] + xr[e.dst[k] * HC + h * C + c]) * p[4][h * C + c];
        scores[k * H + h] = s;
      }
  }
  const Flat alpha = softmax_by_destination(scores, e, N, H);
  const Flat& bias = p.back();
  const int64_t out_cols = concat ? HC : C;
  Flat out(static_cast<size_t>(N * out_cols), 0.0);
  for (int64_t k = 0; k < E; ++k)
    for (int64_t c = 0; c < HC; ++c) {
      const double m = alpha[k * H + c / C] * values[e.src[k] * HC + c];
      out[e.dst[k] * out_cols + (concat ? c : c % C)] += concat ? m : m / H;
    }
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < out_cols; ++c) out[n * out_cols + c] += bias[c];
  return out;
}

// Forward against gat_ref, then d(sum r * out) / d(x and every parameter) against
// central differences of gat_ref.
template <class Conv>
void check_layer(Device device, bool v2, bool concat, uint64_t seed) {
  SCOPED_TRACE(std::string(v2 ? "GATv2Conv" : "GATConv") + (concat ? " concat" : " mean"));
  const SmallGraph sg;
  const Graph g = sg.on(device);
  const int64_t N = sg.n, F = 4, H = 3, C = 2;
  gnn::Generator gen(seed);
  gnn::GATConvOptions o;
  o.heads = H;
  o.concat = concat;
  Conv conv(F, C, gen, o, device);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  auto fill = [&](Variable& v) {
    std::vector<float> host(static_cast<size_t>(v.value().numel()));
    for (float& f : host) f = static_cast<float>(dist(rng));
    v.mutable_value() = Tensor::from_host(host, v.rows(), v.cols(), device);
    return Flat(host.begin(), host.end());
  };
  std::vector<Variable> params = conv.parameters();
  std::vector<Flat> p64;
  for (Variable& p : params) p64.push_back(fill(p));  // bias too: nonzero, so it is tested
  Variable x(Tensor(N, F, device), true);
  const Flat x64 = fill(x);
  const Edges e = edges_of(conv.attention_graph(g));
  ASSERT_EQ(static_cast<int64_t>(e.src.size()), g.num_edges() + N - 1) << "one self loop per node without one";

  Variable y = conv.forward(g, x, gen);
  const Flat ref = gat_ref(v2, x64, p64, e, N, F, H, C, concat, 0.2);
  const auto got = y.value().to_host_vector();
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-5 * std::max(1.0, std::fabs(ref[i])));

  Flat r(ref.size());
  for (double& v : r) v = static_cast<float>(dist(rng));
  y.backward(Tensor::from_host(std::vector<float>(r.begin(), r.end()), y.rows(), y.cols(), device));
  auto loss = [&](const Flat& xs, const std::vector<Flat>& ps) {
    const Flat out = gat_ref(v2, xs, ps, e, N, F, H, C, concat, 0.2);
    double total = 0;
    for (size_t i = 0; i < out.size(); ++i) total += r[i] * out[i];
    return total;
  };
  auto expect_grad = [&](const Variable& v, const std::function<double(int64_t, double)>& probe, const std::string& what) {
    ASSERT_TRUE(v.has_grad()) << what << " got no gradient";
    const auto analytic = v.grad().to_host_vector();
    for (int64_t j = 0; j < static_cast<int64_t>(analytic.size()); ++j) {
      const double h = 1e-6;
      const double numeric = (probe(j, h) - probe(j, -h)) / (2 * h);
      ASSERT_NEAR(analytic[j], numeric, 2e-3 * std::max(1.0, std::fabs(numeric))) << what << "[" << j << "]";
    }
  };
  expect_grad(x, [&](int64_t j, double h) { Flat xs = x64; xs[j] += h; return loss(xs, p64); }, "x");
  for (size_t i = 0; i < params.size(); ++i) {
    expect_grad(params[i], [&](int64_t j, double h) { auto ps = p64; ps[i][j] += h; return loss(x64, ps); },
                params[i].name());
  }
}

TEST_P(AttentionTest, GatConvMatchesPygFormulaAndGradients) {
  check_layer<gnn::GATConv>(device(), false, true, 41);
  check_layer<gnn::GATConv>(device(), false, false, 42);
}

TEST_P(AttentionTest, GatV2ConvMatchesPygFormulaAndGradients) {
  check_layer<gnn::GATv2Conv>(device(), true, true, 43);
  check_layer<gnn::GATv2Conv>(device(), true, false, 44);
}

TEST_P(AttentionTest, ParameterNamesFollowPyg) {
  gnn::Generator gen(1);
  gnn::GATConvOptions o;
  o.heads = 2;
  gnn::GATConv conv(3, 4, gen, o, device());
  std::vector<std::string> names;
  for (const Variable& p : conv.parameters()) names.push_back(p.name());
  EXPECT_EQ(names, (std::vector<std::string>{"lin.weight", "att_src", "att_dst", "bias"}));
  EXPECT_EQ(conv.parameters()[0].cols(), 8);
  EXPECT_EQ(conv.parameters()[3].cols(), 8) << "concat bias has heads * out features";
  o.concat = false;
  gnn::GATConv mean(3, 4, gen, o, device());
  EXPECT_EQ(mean.parameters()[3].cols(), 4);
  gnn::GATv2Conv v2(3, 4, gen, o, device());
  names.clear();
  for (const Variable& p : v2.parameters()) names.push_back(p.name());
  EXPECT_EQ(names, (std::vector<std::string>{"lin_l.weight", "lin_l.bias", "lin_r.weight", "lin_r.bias", "att", "bias"}));
}

TEST_P(AttentionTest, AttentionDropoutOnlyInTrainingAndReproducible) {
  const Graph g = SmallGraph{}.on(device());
  gnn::Generator init(3);
  gnn::GATConvOptions o;
  o.heads = 2;
  o.dropout = 0.5f;
  gnn::GATConv conv(4, 3, init, o, device());
  std::vector<float> xs(24);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<float>(i));
  Variable x(Tensor::from_host(xs, 6, 4, device()));
  auto run = [&](bool training, uint64_t seed) {
    conv.train(training);
    gnn::Generator gen(seed);
    return conv.forward(g, x, gen).value().to_host_vector();
  };
  EXPECT_EQ(run(false, 1), run(false, 2)) << "eval mode is deterministic";
  EXPECT_EQ(run(true, 5), run(true, 5)) << "same seed, same mask";
  EXPECT_NE(run(true, 5), run(false, 5)) << "training drops attention coefficients";
}

TEST_P(AttentionTest, BadShapesNameTheArgument) {
  const Graph g = SmallGraph{}.on(device());
  Variable a(Tensor::zeros(6, 2, device())), wrong(Tensor::zeros(5, 2, device()));
  try {
    gnn::edge_score_add(g, a, wrong);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& err) {
    EXPECT_NE(std::string(err.what()).find("edge_score_add: a_src [6, 2] and a_dst [5, 2]"), std::string::npos)
        << err.what();
  }
  EXPECT_THROW(gnn::head_dot(a, Variable(Tensor::zeros(1, 3, device())), 2), std::invalid_argument);
  EXPECT_THROW(gnn::edge_softmax(g, a), std::invalid_argument);
  gnn::Generator gen(1);
  gnn::GATConv conv(4, 3, gen, {}, device());
  EXPECT_THROW(conv.forward(g, Variable(Tensor::zeros(6, 5, device())), gen), std::invalid_argument);
}

TEST_P(AttentionTest, GatModelHasThePaperShapeAndLearns) {
  // Two planted communities with label-correlated features: a GAT must fit them.
  const int64_t N = 40, F = 6, K = 2;
  std::vector<int64_t> src, dst;
  std::vector<float> feats(static_cast<size_t>(N * F));
  std::vector<int64_t> labels(static_cast<size_t>(N));
  std::mt19937_64 rng(9);
  for (int64_t i = 0; i < N; ++i) {
    labels[i] = i % K;
    for (int64_t f = 0; f < F; ++f) feats[i * F + f] = static_cast<float>((f % K == labels[i] ? 1.0 : 0.0) + 0.3 * std::uniform_real_distribution<double>(-1, 1)(rng));
    for (int64_t j : {i + 2, i + 4}) {
      src.push_back(i);
      dst.push_back(j % N);
    }
  }
  const Graph g = Graph::from_coo(src, dst, N).to(device());
  gnn::ModelConfig c = gnn::default_model_config(gnn::ModelKind::Gat);
  EXPECT_EQ(c.hidden_features, 8);
  EXPECT_EQ(c.gat_heads, 8);
  EXPECT_EQ(c.gat_output_heads, 1);
  EXPECT_FLOAT_EQ(c.dropout, 0.6f);
  EXPECT_FLOAT_EQ(c.attention_dropout, 0.6f);
  EXPECT_EQ(gnn::parse_model_kind("gat"), gnn::ModelKind::Gat);
  EXPECT_STREQ(gnn::to_string(gnn::ModelKind::Gat), "gat");
  c.in_features = F;
  c.out_features = K;
  gnn::Generator gen(4);
  auto model = gnn::make_model(c, gen, device());
  // 64 = 8 heads x 8 hidden features feed the last layer.
  EXPECT_EQ(model->parameters()[0].cols(), 64);
  EXPECT_EQ(model->parameters()[4].rows(), 64);
  gnn::NodeFeatures x;
  x.dense = Tensor::from_host(feats, N, F, device());
  auto labels_t = gnn::IndexTensor::vector(labels, device());
  std::vector<int64_t> all(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) all[i] = i;
  auto rows_t = gnn::IndexTensor::vector(all, device());
  gnn::Adam adam(model->param_groups(5e-4f), gnn::AdamOptions{0.01f});
  for (int epoch = 0; epoch < 60; ++epoch) {
    model->train();
    adam.zero_grad();
    gnn::cross_entropy(model->forward(g, x, gen), labels_t, rows_t).backward();
    adam.step();
  }
  model->eval();
  EXPECT_GE(gnn::ops::accuracy(model->forward(g, x, gen).value(), labels_t, rows_t), 0.9);
  EXPECT_EQ(model->embed(g, x, gen).cols(), 64);
}

INSTANTIATE_TEST_SUITE_P(Devices, AttentionTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
