// Edge features on a Graph (CSR order follows the edges, self loops, transfers) and the
// layers that read them (gather_sources, GINEConv) against naive double references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/message_passing/edge_messages.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gine_conv.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

struct Coo {
  std::vector<int64_t> src, dst;
  int64_t n;
};

// Random edges into nodes [0, n - 2) (the last two have no incoming edges) plus
// duplicate edges and a self loop, so order-following and loops are both exercised.
Coo random_coo(uint64_t salt, int64_t n = 9, int64_t e = 30) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int64_t> node(0, n - 1), target(0, n - 3);
  Coo g{{}, {}, n};
  for (int64_t k = 0; k < e; ++k) g.src.push_back(node(rng)), g.dst.push_back(target(rng));
  for (int r = 0; r < 2; ++r) g.src.push_back(2), g.dst.push_back(4);  // duplicates of one pair
  g.src.push_back(3), g.dst.push_back(3);                                // a self loop
  return g;
}

std::vector<float> distinct_rows(int64_t rows, int64_t cols) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return v;
}

class EdgeFeatureTest : public DeviceTest {};

TEST_P(EdgeFeatureTest, FeaturesFollowTheirEdgesIntoCsrOrder) {
  const Coo c = random_coo(1);
  const int64_t E = static_cast<int64_t>(c.src.size()), D = 3;
  const std::vector<float> attr = distinct_rows(E, D);
  Graph g = Graph::from_coo(c.src, c.dst, c.n).to(device()).with_edge_attr(Tensor::from_host(attr, E, D, device()));
  ASSERT_TRUE(g.has_edge_attr());
  EXPECT_EQ(g.edge_attr().device(), device());
  ASSERT_EQ(g.edge_attr().rows(), E);
  ASSERT_EQ(g.edge_attr().cols(), D);
  // The multiset of (src, dst, features) is the input's: every row stayed with its own
  // edge, each duplicate with its own row.
  using Row = std::tuple<int64_t, int64_t, std::vector<float>>;
  std::vector<Row> want, got;
  for (int64_t e = 0; e < E; ++e) {
    want.emplace_back(c.src[e], c.dst[e], std::vector<float>(attr.begin() + e * D, attr.begin() + (e + 1) * D));
  }
  const auto [s, d] = g.coo();
  const std::vector<float> csr = g.edge_attr().to_host_vector();
  for (int64_t k = 0; k < E; ++k) {
    got.emplace_back(s[k], d[k], std::vector<float>(csr.begin() + k * D, csr.begin() + (k + 1) * D));
  }
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  // Row k is input row edge_ids()[k] exactly (duplicates keep their input order).
  const std::vector<int64_t> ids = g.edge_ids().to_host_vector();
  for (int64_t k = 0; k < E; ++k) {
    for (int64_t j = 0; j < D; ++j) ASSERT_EQ(csr[k * D + j], attr[ids[k] * D + j]) << "CSR edge " << k;
  }
  // Derived graphs keep them.
  EXPECT_EQ(g.to(Device::cpu()).edge_attr().to_host_vector(), csr);
  EXPECT_EQ(g.with_edge_weight(Tensor::full(E, 1, 2.0f, device())).edge_attr().to_host_vector(), csr);
  Graph plain = Graph::from_coo(c.src, c.dst, c.n);
  EXPECT_FALSE(plain.has_edge_attr());
}

TEST_P(EdgeFeatureTest, AddedSelfLoopsGetTheMeanOfTheirIncomingFeatures) {
  const Coo c = random_coo(2);
  const int64_t E = static_cast<int64_t>(c.src.size()), D = 2;
  const std::vector<float> attr = distinct_rows(E, D);
  Graph g = Graph::from_coo(c.src, c.dst, c.n).to(device()).with_edge_attr(Tensor::from_host(attr, E, D, device()));
  for (const Graph& h : {g.with_self_loops(), g.gcn_normalized()}) {
    ASSERT_TRUE(h.has_edge_attr());
    const auto [s, d] = h.coo();
    const std::vector<float> got = h.edge_attr().to_host_vector();
    ASSERT_EQ(static_cast<int64_t>(got.size()), h.num_edges() * D);
    std::vector<int> loops(static_cast<size_t>(c.n), 0);
    for (int64_t k = 0; k < h.num_edges(); ++k) {
      if (s[k] != d[k]) continue;
      const int64_t v = s[k];
      ++loops[v];
      for (int64_t j = 0; j < D; ++j) {
        double want = 0;
        int64_t own_loop = -1;
        for (int64_t e = 0; e < E; ++e) {
          if (c.src[e] == v && c.dst[e] == v) own_loop = e;
        }
        if (own_loop >= 0) {  // an input loop (node 3 has one) keeps its row
          want = attr[own_loop * D + j];
        } else {  // mean of the node's incoming input rows, 0 without any
          int count = 0;
          for (int64_t e = 0; e < E; ++e) {
            if (c.dst[e] == v) want += attr[e * D + j], ++count;
          }
          want = count ? want / count : 0.0;
        }
        EXPECT_NEAR(got[k * D + j], want, 1e-5) << "loop of node " << v << " column " << j;
      }
    }
    for (int64_t v = 0; v < c.n; ++v) EXPECT_EQ(loops[v], 1) << "node " << v;
  }
}

TEST(EdgeFeatures, BadFeaturesAreRejectedNamingTheArgument) {
  const Coo c = random_coo(3);
  const int64_t E = static_cast<int64_t>(c.src.size());
  Graph g = Graph::from_coo(c.src, c.dst, c.n);
  auto message = [&](const Tensor& t) {
    try {
      (void)g.with_edge_attr(t);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Tensor::zeros(E - 1, 2)).find("edge_attr [" + std::to_string(E - 1) + ", 2] has"),
            std::string::npos);
  EXPECT_NE(message(Tensor::zeros(E, 0)).find("at least one column"), std::string::npos);
  std::vector<float> bad(static_cast<size_t>(E * 2), 0.0f);
  bad[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(message(Tensor::from_host(bad, E, 2)).find("edge_attr[2, 1]"), std::string::npos);
  EXPECT_FALSE(g.has_edge_attr());  // the graph itself is unchanged
}

TEST_P(EdgeFeatureTest, GatherSourcesGradientChecks) {
  const Coo c = random_coo(4);
  Graph g = Graph::from_coo(c.src, c.dst, c.n).to(device());
  const std::vector<int64_t> s = g.coo().first;  // not a structured binding: the lambda captures it
  check_gradients({"gather_sources",
                   {{c.n, 3}},
                   {},
                   [&](const std::vector<Variable>& v) { return gather_sources(g, v[0]); },
                   [&](const std::vector<Flat>& x) {
                     Flat out;
                     for (int64_t src : s)
                       for (int j = 0; j < 3; ++j) out.push_back(x[0][src * 3 + j]);
                     return out;
                   }},
                  device(), 500);
}

// PyG's GINEConv in double: mlp((1 + eps) x_i + sum_{j -> i} relu(x_j + lin(e_ji))).
struct GineRef {
  const Coo& c;
  Flat attr;  // [E, A] input order
  int64_t F, A, H, O;
  Flat w1, b1, w2, b2, we, be;  // Linear weights are [in, out]

  Flat operator()(const Flat& x, double eps) const {
    const int64_t E = static_cast<int64_t>(c.src.size());
    Flat agg(static_cast<size_t>(c.n * F), 0.0);
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t f = 0; f < F; ++f) {
        double edge = 0;
        if (we.empty()) {
          edge = attr[e * A + f];
        } else {
          edge = be[f];
          for (int64_t a = 0; a < A; ++a) edge += attr[e * A + a] * we[a * F + f];
        }
        agg[c.dst[e] * F + f] += std::max(0.0, x[c.src[e] * F + f] + edge);
      }
    }
    Flat out(static_cast<size_t>(c.n * O), 0.0);
    for (int64_t v = 0; v < c.n; ++v) {
      Flat h(static_cast<size_t>(H));
      for (int64_t k = 0; k < H; ++k) {
        double acc = b1[k];
        for (int64_t f = 0; f < F; ++f) acc += ((1 + eps) * x[v * F + f] + agg[v * F + f]) * w1[f * H + k];
        h[k] = std::max(0.0, acc);
      }
      for (int64_t o = 0; o < O; ++o) {
        double acc = b2[o];
        for (int64_t k = 0; k < H; ++k) acc += h[k] * w2[k * O + o];
        out[v * O + o] = acc;
      }
    }
    return out;
  }
};

Flat host(const Variable& v) {
  const auto h = v.value().to_host_vector();
  return Flat(h.begin(), h.end());
}

TEST_P(EdgeFeatureTest, GineConvMatchesTheFormulaWithAndWithoutEdgeProjection) {
  const Coo c = random_coo(5);
  const int64_t E = static_cast<int64_t>(c.src.size()), F = 4, H = 5, O = 3;
  for (int64_t edge_dim : {int64_t{2}, int64_t{0}}) {
    SCOPED_TRACE("edge_dim " + std::to_string(edge_dim));
    const int64_t A = edge_dim > 0 ? edge_dim : F;
    auto rng = rng_for(600 + edge_dim);
    const std::vector<float> attr = random_values<float>(rng, E * A, -1, 1);
    Graph g = Graph::from_coo(c.src, c.dst, c.n).to(device()).with_edge_attr(Tensor::from_host(attr, E, A, device()));
    Generator gen(7);
    GINEConvOptions o;
    o.eps = 0.3f;
    o.train_eps = true;
    o.edge_dim = edge_dim;
    GINEConv conv(F, H, O, gen, o, device());
    const NamedParameters named = conv.named_parameters();
    std::vector<std::string> names;
    for (const auto& entry : named) names.push_back(entry.first);
    std::vector<std::string> want_names{"nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"};
    if (edge_dim > 0) want_names.insert(want_names.end(), {"lin.weight", "lin.bias"});
    want_names.push_back("eps");
    EXPECT_EQ(names, want_names);
    GineRef ref{c, Flat(attr.begin(), attr.end()), F, A, H, O, host(named[0].second), host(named[1].second),
                host(named[2].second), host(named[3].second), {}, {}};
    if (edge_dim > 0) ref.we = host(named[4].second), ref.be = host(named[5].second);
    check_gradients({"gine_conv",
                     {{c.n, F}},
                     {},
                     [&](const std::vector<Variable>& v) { return conv.forward(g, v[0]); },
                     [&](const std::vector<Flat>& x) { return ref(x[0], 0.3); }},
                    device(), 601);
    // Every parameter, eps and the edge projection included, against central differences.
    auto xr = rng_for(602);
    const std::vector<float> xs = random_values<float>(xr, c.n * F, -1, 1);
    const Flat x64(xs.begin(), xs.end());
    for (auto [name, p] : named) p.zero_grad();  // a copy shares the parameter's storage
    Variable y = conv.forward(g, Variable(Tensor::from_host(xs, c.n, F, device())));
    y.backward(Tensor::full(c.n, O, 1.0f, device()));
    for (size_t i = 0; i < named.size(); ++i) {
      // Named, not a structured binding: the lambda below captures it (clang 14 rejects that).
      const std::string& name = named[i].first;
      const Variable& p = named[i].second;
      ASSERT_TRUE(p.has_grad()) << name;
      const std::vector<float> analytic = p.grad().to_host_vector();
      GineRef probe = ref;
      Flat* target[] = {&probe.w1, &probe.b1, &probe.w2, &probe.b2, &probe.we, &probe.be};
      double eps = 0.3;
      for (size_t j = 0; j < analytic.size(); ++j) {
        auto total = [&](double delta) {
          if (name == "eps") {
            eps = 0.3 + delta;
          } else {
            (*target[i])[j] += delta;
          }
          double t = 0;
          for (double v : probe(x64, eps)) t += v;
          if (name == "eps") {
            eps = 0.3;
          } else {
            (*target[i])[j] -= delta;
          }
          return t;
        };
        const double numeric = (total(1e-6) - total(-1e-6)) / 2e-6;
        ASSERT_NEAR(analytic[j], numeric, 2e-3 * std::max(1.0, std::fabs(numeric))) << name << "[" << j << "]";
      }
    }
  }
}

TEST_P(EdgeFeatureTest, GineConvOnAGraphWithoutEdgesIsTheMlpOfScaledX) {
  Graph g = Graph::from_coo(std::vector<int64_t>{}, std::vector<int64_t>{}, 4)
                .to(device())
                .with_edge_attr(Tensor::zeros(0, 2, device()));
  Generator gen(1);
  GINEConvOptions o;
  o.eps = 1.0f;
  o.edge_dim = 2;
  GINEConv conv(3, 4, 2, gen, o, device());
  auto rng = rng_for(700);
  Variable x(Tensor::from_host(random_values<float>(rng, 12, -1, 1), 4, 3, device()), true);
  Variable y = conv.forward(g, x);
  const NamedParameters named = conv.named_parameters();
  const Flat w1 = host(named[0].second), b1 = host(named[1].second), w2 = host(named[2].second),
             b2 = host(named[3].second), xv = host(x), got = host(y);
  for (int64_t v = 0; v < 4; ++v) {
    for (int64_t o2 = 0; o2 < 2; ++o2) {
      double acc = b2[o2];
      for (int64_t k = 0; k < 4; ++k) {
        double h = b1[k];
        for (int64_t f = 0; f < 3; ++f) h += 2.0 * xv[v * 3 + f] * w1[f * 4 + k];
        acc += std::max(0.0, h) * w2[k * 2 + o2];
      }
      EXPECT_NEAR(got[v * 2 + o2], acc, 1e-5);
    }
  }
  y.backward(Tensor::full(4, 2, 1.0f, device()));
  EXPECT_TRUE(x.has_grad());
}

TEST(EdgeFeatures, DatasetValidationChecksEdgeFeatures) {
  Dataset d;
  d.name = "tiny";
  d.num_nodes = 3;
  d.edge_index = {0, 1, 1, 2};  // edges 0 -> 1, 1 -> 2
  d.features.rows = 3;
  d.edge_feat = {1, 2, 3, 4};
  d.edge_feat_dim = 2;
  EXPECT_NO_THROW(d.validate());
  auto message = [](const Dataset& bad) {
    try {
      bad.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Dataset short_rows = d;
  short_rows.edge_feat.pop_back();
  EXPECT_NE(message(short_rows).find("edge_feat has 3 values, not E * edge_feat_dim = 2 * 2"), std::string::npos);
  Dataset nan = d;
  nan.edge_feat[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(message(nan).find("edge_feat[1, 1]"), std::string::npos);
}

TEST(EdgeFeatures, GineConvRejectsMissingOrMisshapenEdgeFeatures) {
  const Coo c = random_coo(8);
  const int64_t E = static_cast<int64_t>(c.src.size());
  Generator gen(2);
  GINEConvOptions o;
  o.edge_dim = 3;
  GINEConv conv(4, 4, 2, gen, o);
  Variable x(Tensor::zeros(c.n, 4));
  Graph plain = Graph::from_coo(c.src, c.dst, c.n);
  EXPECT_THROW(
      {
        try {
          conv.forward(plain, x);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("no edge features"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  Graph wrong = plain.with_edge_attr(Tensor::zeros(E, 2));
  EXPECT_THROW(
      {
        try {
          conv.forward(wrong, x);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("edge_dim 3"), std::string::npos);
          throw;
        }
      },
      std::invalid_argument);
  o.edge_dim = -1;
  EXPECT_THROW(GINEConv(4, 4, 2, gen, o), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Devices, EdgeFeatureTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
