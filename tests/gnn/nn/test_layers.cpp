// Layers against dense double references (Â X W + b for GCN, the PyG formulas for
// SAGE and GIN), gradient checks of every parameter, sparse == dense inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/nn/gin_conv.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/nn/sage_conv.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

struct Net {
  std::vector<int64_t> src, dst;
  int64_t n;
};

Net small_net() {
  // A ring with chords, node 5 isolated (no in-edges: exercises empty rows).
  Net g{{}, {}, 7};
  for (int64_t i = 0; i < 7; ++i) {
    if (i == 5 || (i + 1) % 7 == 5) continue;
    g.src.push_back(i), g.dst.push_back((i + 1) % 7);
    g.src.push_back((i + 1) % 7), g.dst.push_back(i);
  }
  g.src.push_back(0), g.dst.push_back(3);
  g.src.push_back(3), g.dst.push_back(0);
  return g;
}

Flat host(const Tensor& t) {
  auto v = t.to_host_vector();
  return Flat(v.begin(), v.end());
}

// Dense Â = D^-1/2 (A + I) D^-1/2 with remaining self loops.
std::vector<double> gcn_adjacency(const Net& g) {
  std::vector<double> a(static_cast<size_t>(g.n * g.n), 0.0);
  for (size_t e = 0; e < g.src.size(); ++e) a[g.dst[e] * g.n + g.src[e]] += 1;
  for (int64_t i = 0; i < g.n; ++i) {
    if (a[i * g.n + i] == 0) a[i * g.n + i] = 1;
  }
  std::vector<double> deg(static_cast<size_t>(g.n), 0);
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t j = 0; j < g.n; ++j) deg[i] += a[i * g.n + j];
  for (int64_t i = 0; i < g.n; ++i)
    for (int64_t j = 0; j < g.n; ++j) a[i * g.n + j] /= std::sqrt(deg[i] * deg[j]);
  return a;
}

Flat matmul(const Flat& a, const Flat& b, int64_t m, int64_t k, int64_t n) {
  Flat c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

using LayerTest = DeviceTest;

TEST_P(LayerTest, GcnConvEqualsNormalisedAdjacencyTimesXW) {
  const Net net = small_net();
  Graph graph = Graph::from_coo(net.src, net.dst, net.n).to(device());
  Generator gen(1);
  GCNConv conv(4, 3, gen, {}, device());
  // Make the bias nonzero so it is checked.
  Variable bias = conv.parameters()[1];
  bias.mutable_value() = Tensor::from_host(std::vector<float>{0.1f, -0.2f, 0.3f}, 1, 3, device());
  const std::vector<double> a = gcn_adjacency(net);
  const Flat w = host(conv.weight().value());
  check_gradients({"gcn_conv",
                   {{net.n, 4}},
                   {},
                   [&](const std::vector<Variable>& v) { return conv.forward(graph, v[0]); },
                   [&](const std::vector<Flat>& x) {
                     Flat y = matmul(Flat(a.begin(), a.end()), matmul(x[0], w, net.n, 4, 3), net.n, net.n, 3);
                     for (int64_t i = 0; i < net.n; ++i)
                       for (int c = 0; c < 3; ++c) y[i * 3 + c] += std::vector<double>{0.1, -0.2, 0.3}[c];
                     return y;
                   }},
                  device(), 400);
  // And the weights get their gradient (x fixed).
  auto rng = rng_for(405);
  auto x = Tensor::from_host(random_values<float>(rng, net.n * 4, -1, 1), net.n, 4, device());
  for (Variable p : conv.parameters()) p.zero_grad();  // the gradient check above left gradients
  Variable out = conv.forward(graph, Variable(x));
  out.backward(Tensor::full(net.n, 3, 1.0f, device()));
  EXPECT_TRUE(conv.weight().has_grad());
  EXPECT_TRUE(bias.has_grad());
  EXPECT_NEAR(bias.grad().to_host_vector()[0], static_cast<float>(net.n), 1e-5);
}

// GCNConv propagates first when in < out, or in == out with an x that needs no
// gradient (then the backward has no propagation): both orders must give Â x W + b
// and the weight gradient (Â x)^T dOut.
TEST_P(LayerTest, GcnConvPropagatesFirstWhenNarrowerAndMatchesTheReference) {
  const Net net = small_net();
  Graph graph = Graph::from_coo(net.src, net.dst, net.n).to(device());
  const std::vector<double> a_hat = gcn_adjacency(net);
  const Flat a(a_hat.begin(), a_hat.end());
  for (auto [in, out] : {std::pair<int64_t, int64_t>{3, 5}, {4, 4}, {6, 2}}) {
    SCOPED_TRACE(testing::Message() << in << " -> " << out);
    Generator gen(in * 10 + out);
    GCNConv conv(in, out, gen, {}, device());
    const Flat w = host(conv.weight().value());
    // Gradients with respect to x (x requires grad: either order).
    check_gradients({"gcn_conv_order",
                     {{net.n, in}},
                     {},
                     [&](const std::vector<Variable>& v) { return conv.forward(graph, v[0]); },
                     [&](const std::vector<Flat>& x) {
                       return matmul(a, matmul(x[0], w, net.n, in, out), net.n, net.n, out);
                     }},
                    device(), 410 + in);
    // Output and weight gradient with an x that needs no gradient.
    auto rng = rng_for(420 + in);
    const auto xs = random_values<float>(rng, net.n * in, -1, 1);
    const auto gs = random_values<float>(rng, net.n * out, -1, 1);
    for (Variable p : conv.parameters()) p.zero_grad();
    Variable y = conv.forward(graph, Variable(Tensor::from_host(xs, net.n, in, device())));
    y.backward(Tensor::from_host(gs, net.n, out, device()));
    const Flat ax = matmul(a, Flat(xs.begin(), xs.end()), net.n, net.n, in);
    const Flat want_y = matmul(ax, w, net.n, in, out);
    const auto got_y = y.value().to_host_vector();
    for (size_t i = 0; i < got_y.size(); ++i) ASSERT_NEAR(got_y[i], want_y[i], 1e-5) << "y " << i;
    const auto got_dw = conv.weight().grad().to_host_vector();
    for (int64_t p = 0; p < in; ++p) {
      for (int64_t j = 0; j < out; ++j) {
        double want = 0;
        for (int64_t r = 0; r < net.n; ++r) want += ax[r * in + p] * gs[r * out + j];
        ASSERT_NEAR(got_dw[p * out + j], want, 1e-5) << "dW[" << p << ", " << j << "]";
      }
    }
  }
}

TEST_P(LayerTest, SparseInputEqualsDenseInput) {
  const Net net = small_net();
  Graph graph = Graph::from_coo(net.src, net.dst, net.n).to(device());
  auto rng = rng_for(401);
  std::vector<float> dense(static_cast<size_t>(net.n * 6), 0.0f);
  std::uniform_real_distribution<float> u(0, 1);
  for (auto& v : dense) v = u(rng) < 0.3 ? u(rng) : 0.0f;
  const CsrMatrix csr = CsrMatrix::from_dense(MatrixView<const float>(dense.data(), net.n, 6));
  SparseTensor sparse = SparseTensor::from_csr(csr, device());
  Tensor x = Tensor::from_host(dense, net.n, 6, device());
  for (ModelKind kind : {ModelKind::GCN, ModelKind::GraphSAGE, ModelKind::GIN}) {
    for (SageAggregator agg : {SageAggregator::Mean, SageAggregator::MaxPool}) {
      if (kind != ModelKind::GraphSAGE && agg != SageAggregator::Mean) continue;
      ModelConfig config;
      config.kind = kind;
      config.in_features = 6;
      config.hidden_features = 5;
      config.out_features = 3;
      config.sage_aggregator = agg;
      Generator g1(9), g2(9);
      auto a = make_model(config, g1, device());
      auto b = make_model(config, g2, device());
      a->eval();
      b->eval();
      NodeFeatures fs, fd;
      fs.sparse = sparse;
      fd.dense = x;
      Variable ys = a->forward(graph, fs, g1);
      Variable yd = b->forward(graph, fd, g2);
      auto vs = ys.value().to_host_vector(), vd = yd.value().to_host_vector();
      for (size_t i = 0; i < vs.size(); ++i) ASSERT_NEAR(vs[i], vd[i], 1e-5) << to_string(kind) << " element " << i;
      // Parameter gradients agree too.
      ys.backward(Tensor::full(ys.rows(), ys.cols(), 1.0f, device()));
      yd.backward(Tensor::full(yd.rows(), yd.cols(), 1.0f, device()));
      auto pa = a->parameters(), pb = b->parameters();
      for (size_t p = 0; p < pa.size(); ++p) {
        if (!pa[p].has_grad()) continue;
        auto ga = pa[p].grad().to_host_vector(), gb = pb[p].grad().to_host_vector();
        for (size_t i = 0; i < ga.size(); ++i) ASSERT_NEAR(ga[i], gb[i], 1e-4) << to_string(kind) << " param " << p;
      }
    }
  }
}

TEST_P(LayerTest, SageConvMatchesThePygFormula) {
  const Net net = small_net();
  Graph graph = Graph::from_coo(net.src, net.dst, net.n).to(device());
  for (SageAggregator agg :
       {SageAggregator::Mean, SageAggregator::Sum, SageAggregator::MaxPool, SageAggregator::Var, SageAggregator::Std}) {
    for (bool normalize : {false, true}) {
      Generator gen(2);
      SAGEConvOptions o;
      o.aggregator = agg;
      o.normalize = normalize;
      SAGEConv conv(4, 3, gen, o, device());
      const auto ps = conv.parameters();  // lin_l.w, lin_l.b, lin_r.w, [proj.w, proj.b]
      const Flat wl = host(ps[0].value()), bl = host(ps[1].value()), wr = host(ps[2].value());
      Flat wp, bp;
      if (agg == SageAggregator::MaxPool) wp = host(ps[3].value()), bp = host(ps[4].value());
      check_gradients({"sage_conv",
                       {{net.n, 4}},
                       {},
                       [&](const std::vector<Variable>& v) { return conv.forward(graph, v[0]); },
                       [&](const std::vector<Flat>& x) {
                         Flat h = x[0];
                         if (agg == SageAggregator::MaxPool) {
                           h = matmul(x[0], wp, net.n, 4, 4);
                           for (int64_t i = 0; i < net.n * 4; ++i) h[i] = std::max(0.0, h[i] + bp[i % 4]);
                         }
                         Flat aggd(static_cast<size_t>(net.n * 4), 0.0);
                         for (int64_t v = 0; v < net.n; ++v) {
                           int64_t deg = 0;
                           for (int c = 0; c < 4; ++c) {
                             double acc = agg == SageAggregator::MaxPool ? -1e300 : 0.0;
                             double squares = 0;
                             deg = 0;
                             for (size_t e = 0; e < net.src.size(); ++e) {
                               if (net.dst[e] != v) continue;
                               ++deg;
                               const double m = h[net.src[e] * 4 + c];
                               acc = agg == SageAggregator::MaxPool ? std::max(acc, m) : acc + m;
                               squares += m * m;
                             }
                             if (deg == 0) acc = 0;
                             if (agg == SageAggregator::Mean && deg > 0) acc /= deg;
                             if ((agg == SageAggregator::Var || agg == SageAggregator::Std) && deg > 0) {
                               const double mean = acc / deg;  // PyG's VarAggregation: E[x^2] - E[x]^2
                               const double var = squares / deg - mean * mean;
                               const double sd = std::sqrt(std::max(var, 1e-5));
                               acc = agg == SageAggregator::Var ? var : (sd <= std::sqrt(1e-5) ? 0.0 : sd);
                             }
                             aggd[v * 4 + c] = acc;
                           }
                         }
                         Flat y = matmul(aggd, wl, net.n, 4, 3);
                         Flat r = matmul(x[0], wr, net.n, 4, 3);
                         for (int64_t i = 0; i < net.n * 3; ++i) y[i] += r[i] + bl[i % 3];
                         if (normalize) {
                           for (int64_t v = 0; v < net.n; ++v) {
                             double s = 0;
                             for (int c = 0; c < 3; ++c) s += y[v * 3 + c] * y[v * 3 + c];
                             s = std::max(std::sqrt(s), 1e-12);
                             for (int c = 0; c < 3; ++c) y[v * 3 + c] /= s;
                           }
                         }
                         return y;
                       }},
                      device(), 402);
    }
  }
}

TEST_P(LayerTest, GinConvMatchesTheFormulaWithLearnableEps) {
  const Net net = small_net();
  Graph graph = Graph::from_coo(net.src, net.dst, net.n).to(device());
  Generator gen(3);
  GINConvOptions o;
  o.eps = 0.25f;
  o.train_eps = true;
  GINConv conv(4, 5, 3, gen, o, device());
  const auto ps = conv.parameters();  // w1, b1, w2, b2, eps
  ASSERT_EQ(ps.size(), 5u);
  const Flat w1 = host(ps[0].value()), b1 = host(ps[1].value()), w2 = host(ps[2].value()), b2 = host(ps[3].value());
  auto reference = [&](const Flat& x, double eps) {
    Flat s(static_cast<size_t>(net.n * 4));
    for (int64_t v = 0; v < net.n; ++v) {
      for (int c = 0; c < 4; ++c) {
        double acc = (1.0 + eps) * x[v * 4 + c];
        for (size_t e = 0; e < net.src.size(); ++e)
          if (net.dst[e] == v) acc += x[net.src[e] * 4 + c];
        s[v * 4 + c] = acc;
      }
    }
    Flat h = matmul(s, w1, net.n, 4, 5);
    for (int64_t i = 0; i < net.n * 5; ++i) h[i] = std::max(0.0, h[i] + b1[i % 5]);
    Flat y = matmul(h, w2, net.n, 5, 3);
    for (int64_t i = 0; i < net.n * 3; ++i) y[i] += b2[i % 3];
    return y;
  };
  check_gradients({"gin_conv",
                   {{net.n, 4}},
                   {},
                   [&](const std::vector<Variable>& v) { return conv.forward(graph, v[0]); },
                   [&](const std::vector<Flat>& x) { return reference(x[0], 0.25); }},
                  device(), 403);
  // d sum(y) / d eps against a central difference of the double reference.
  auto rng = rng_for(404);
  const auto xs = random_values<float>(rng, net.n * 4, -1, 1);
  const Flat x64(xs.begin(), xs.end());
  Variable eps = ps[4];
  eps.zero_grad();
  Variable y = conv.forward(graph, Variable(Tensor::from_host(xs, net.n, 4, device())));
  y.backward(Tensor::full(net.n, 3, 1.0f, device()));
  ASSERT_TRUE(eps.has_grad()) << "learnable eps receives a gradient";
  auto total = [&](double e) {
    double t = 0;
    for (double v : reference(x64, e)) t += v;
    return t;
  };
  const double numeric = (total(0.25 + 1e-6) - total(0.25 - 1e-6)) / 2e-6;
  EXPECT_NEAR(eps.grad().to_host_vector()[0], numeric, 2e-3 * std::max(1.0, std::fabs(numeric)));
}

INSTANTIATE_TEST_SUITE_P(Devices, LayerTest, testing::ValuesIn(all_devices()), device_name);

TEST(Models, GcnDecaysOnlyTheFirstLayerAndBadConfigsAreRejected) {
  ModelConfig c;
  c.in_features = 10;
  c.out_features = 3;
  Generator gen(0);
  auto gcn = make_model(c, gen);
  auto groups = gcn->param_groups(5e-4f);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].weight_decay, 5e-4f);
  EXPECT_EQ(groups[1].weight_decay, 0.0f);
  EXPECT_EQ(groups[0].params.size() + groups[1].params.size(), gcn->parameters().size());
  c.kind = ModelKind::GraphSAGE;
  EXPECT_EQ(make_model(c, gen)->param_groups(1e-3f).size(), 1u);
  c.dropout = 1.5f;
  EXPECT_THROW(make_model(c, gen), std::invalid_argument);
  EXPECT_THROW(parse_model_kind("transformer"), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
