// RGCNConv against a naive double-precision loop over relations and edges (plain,
// basis and block weights; mean / sum / max), gradients of x and of every parameter
// against central finite differences of that loop, PyG names and shapes, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "edgewise/gnn/graph/relation_split.hpp"
#include "edgewise/gnn/nn/rgcn_conv.hpp"
#include "gnn_test_data.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

struct TypedGraph {
  int64_t n = 0;
  std::vector<int64_t> src, dst, type;
};

// Random typed edges; nodes above max_id have no edges, relation `unused` none.
TypedGraph typed_graph(int64_t n, int64_t e, int64_t relations, uint64_t seed, int64_t max_id, int64_t unused = -1) {
  EdgeList g = random_edges(n, e, seed, max_id);
  std::mt19937_64 rng(seed + 1);
  std::uniform_int_distribution<int64_t> pick(0, relations - 1);
  TypedGraph t{n, g.src, g.dst, {}};
  for (int64_t k = 0; k < e; ++k) {
    int64_t r = pick(rng);
    if (r == unused) r = (r + 1) % relations;
    t.type.push_back(r);
  }
  return t;
}

struct Config {
  std::string name;
  int64_t in, out, relations;
  RGCNConvOptions options;
};

// The parameters as flat doubles, by PyG name ("comp", "root", "bias" may be absent).
using Params = std::map<std::string, Flat>;

Params params_of(const RGCNConv& conv) {
  Params p;
  for (const auto& [name, t] : conv.state_dict()) {
    auto v = t.to_host_vector();
    p[name] = Flat(v.begin(), v.end());
  }
  return p;
}

// W_r [in, out] from PyG's formulas, independent of the layer's code.
std::vector<Flat> relation_weights_ref(const Config& c, const Params& p) {
  const int64_t in = c.in, out = c.out, R = c.relations;
  std::vector<Flat> w(static_cast<size_t>(R), Flat(static_cast<size_t>(in * out), 0.0));
  const Flat& weight = p.at("weight");
  for (int64_t r = 0; r < R; ++r) {
    if (c.options.num_blocks > 0) {
      const int64_t B = c.options.num_blocks, bi = in / B, bo = out / B;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < bi; ++i)
          for (int64_t j = 0; j < bo; ++j) w[r][(b * bi + i) * out + b * bo + j] = weight[((r * B + b) * bi + i) * bo + j];
    } else if (c.options.num_bases > 0) {
      const int64_t B = c.options.num_bases;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t k = 0; k < in * out; ++k) w[r][k] += p.at("comp")[r * B + b] * weight[b * in * out + k];
    } else {
      for (int64_t k = 0; k < in * out; ++k) w[r][k] = weight[r * in * out + k];
    }
  }
  return w;
}

// out_i = x_i root + bias + sum_r aggr_{j in N_r(i)} x_j W_r, empty aggregation 0.
Flat rgcn_ref(const Config& c, const TypedGraph& g, const Flat& x, const Params& p) {
  const int64_t in = c.in, out = c.out, n = g.n;
  const std::vector<Flat> w = relation_weights_ref(c, p);
  Flat y(static_cast<size_t>(n * out), 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < out; ++j) {
      double acc = p.count("bias") ? p.at("bias")[j] : 0.0;
      if (p.count("root"))
        for (int64_t k = 0; k < in; ++k) acc += x[i * in + k] * p.at("root")[k * out + j];
      y[i * out + j] = acc;
    }
  }
  for (int64_t r = 0; r < c.relations; ++r) {
    for (int64_t i = 0; i < n; ++i) {
      Flat agg(static_cast<size_t>(in), c.options.aggr == ReduceOp::Max ? -1e300 : 0.0);
      int64_t deg = 0;
      for (size_t e = 0; e < g.src.size(); ++e) {
        if (g.dst[e] != i || g.type[e] != r) continue;
        ++deg;
        for (int64_t k = 0; k < in; ++k) {
          const double v = x[g.src[e] * in + k];
          agg[k] = c.options.aggr == ReduceOp::Max ? std::max(agg[k], v) : agg[k] + v;
        }
      }
      if (deg == 0) continue;
      if (c.options.aggr == ReduceOp::Mean)
        for (double& a : agg) a /= static_cast<double>(deg);
      for (int64_t j = 0; j < out; ++j)
        for (int64_t k = 0; k < in; ++k) y[i * out + j] += agg[k] * w[r][k * out + j];
    }
  }
  return y;
}

Flat random_flat(std::mt19937_64& rng, int64_t n) {
  std::uniform_real_distribution<double> d(-1, 1);
  Flat v(static_cast<size_t>(n));
  for (double& e : v) e = static_cast<float>(d(rng));
  return v;
}

Tensor to_tensor(const Flat& v, int64_t rows, int64_t cols, Device device) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::from_host(f, rows, cols, device);
}

// Forward against rgcn_ref; with `grads`, d sum(proj * y) / d (x, every parameter)
// against central differences of rgcn_ref.
void check_layer(const Config& c, const TypedGraph& g, Device device, uint64_t salt, bool grads) {
  SCOPED_TRACE(c.name + " R=" + std::to_string(c.relations));
  Generator gen(salt);
  RGCNConv conv(c.in, c.out, c.relations, gen, c.options, device);
  std::mt19937_64 rng = rng_for(salt);
  const Flat x64 = random_flat(rng, g.n * c.in);
  Variable x(to_tensor(x64, g.n, c.in, device), true);
  const Graph graph = Graph::from_coo(g.src, g.dst, g.n).to(device);
  Variable y = conv.forward(graph, g.type, x);
  Params params = params_of(conv);
  const Flat want = rgcn_ref(c, g, x64, params);
  const std::vector<float> got = y.value().to_host_vector();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::fabs(want[i]))) << "output " << i;
  }
  if (!grads) return;

  const Flat proj = random_flat(rng, g.n * c.out);
  y.backward(to_tensor(proj, g.n, c.out, device));
  auto loss = [&](const Flat& xs, const Params& ps) {
    const Flat out = rgcn_ref(c, g, xs, ps);
    double total = 0;
    for (size_t i = 0; i < out.size(); ++i) total += proj[i] * out[i];
    return total;
  };
  // Central difference of `value`'s element j; loss is evaluated by `eval`.
  auto numeric = [](double& value, auto&& eval) {
    const double saved = value, h = 1e-6 * std::max(1.0, std::fabs(saved));
    value = saved + h;
    const double up = eval();
    value = saved - h;
    const double down = eval();
    value = saved;
    return (up - down) / (2 * h);
  };
  auto compare = [](const std::vector<float>& analytic, double num, size_t j, const std::string& what) {
    ASSERT_NEAR(analytic[j], num, 2e-3 * std::max(1.0, std::fabs(num))) << "d loss / d " << what << "[" << j << "]";
  };
  ASSERT_TRUE(x.has_grad());
  const std::vector<float> gx = x.grad().to_host_vector();
  Flat probe = x64;
  for (size_t j = 0; j < probe.size(); ++j) compare(gx, numeric(probe[j], [&] { return loss(probe, params); }), j, "x");
  for (const auto& [name, p] : conv.named_parameters()) {
    // No gradient at all (no edges reach the weight): it must be 0 numerically too.
    const std::vector<float> gp =
        p.has_grad() ? p.grad().to_host_vector() : std::vector<float>(static_cast<size_t>(p.rows() * p.cols()), 0.0f);
    Params probe_params = params;
    Flat& values = probe_params.at(name);
    for (size_t j = 0; j < values.size(); ++j) {
      compare(gp, numeric(values[j], [&] { return loss(x64, probe_params); }), j, name);
    }
  }
}

using RgcnTest = DeviceTest;

TEST_P(RgcnTest, MatchesTheNaiveLoopAndFiniteDifferences) {
  RGCNConvOptions bases, blocks, bare;
  bases.num_bases = 2;
  blocks.num_blocks = 2;
  bare.aggr = ReduceOp::Sum;
  bare.root_weight = false;
  bare.bias = false;
  const std::vector<Config> configs = {{"plain", 3, 4, 3, {}},
                                       {"bases", 3, 2, 3, bases},
                                       {"blocks", 4, 6, 3, blocks},
                                       {"sum without root or bias", 3, 2, 3, bare},
                                       {"one relation", 3, 2, 1, {}}};
  uint64_t salt = 100;
  for (const Config& c : configs) {
    // 9 nodes, 7 and 8 isolated; relation 1 empty when there are several.
    const TypedGraph g = typed_graph(9, 20, c.relations, ++salt, 6, c.relations > 1 ? 1 : -1);
    check_layer(c, g, device(), salt, /*grads=*/true);
  }
}

TEST_P(RgcnTest, MaxAggregationAndBasesOverManyRelations) {
  RGCNConvOptions max_aggr;
  max_aggr.aggr = ReduceOp::Max;
  check_layer({"max", 3, 4, 4, max_aggr}, typed_graph(12, 40, 4, 7, 10), device(), 7, false);
  RGCNConvOptions bases;
  bases.num_bases = 3;
  check_layer({"bases, more relations than bases", 2, 3, 5, bases}, typed_graph(10, 30, 5, 8, 9), device(), 8, false);
}

TEST_P(RgcnTest, NoEdgesGivesRootAndBias) {
  check_layer({"no edges", 3, 2, 2, {}}, TypedGraph{5, {}, {}, {}}, device(), 9, true);
}

TEST_P(RgcnTest, SplittingOnceEqualsSplittingPerCall) {
  const TypedGraph g = typed_graph(10, 30, 3, 11, 9);
  Generator gen(3);
  RGCNConv conv(3, 4, 3, gen, {}, device());
  std::mt19937_64 rng = rng_for(11);
  Variable x(to_tensor(random_flat(rng, 10 * 3), 10, 3, device()));
  const Graph graph = Graph::from_coo(g.src, g.dst, 10).to(device());
  const std::vector<Graph> split = split_by_relation(graph, g.type, 3);
  ASSERT_EQ(split.size(), 3u);
  int64_t edges = 0;
  for (const Graph& s : split) edges += s.num_edges();
  EXPECT_EQ(edges, graph.num_edges()) << "the relations partition the edges";
  EXPECT_EQ(conv.forward(graph, g.type, x).value().to_host_vector(), conv.forward(split, x).value().to_host_vector());
}

INSTANTIATE_TEST_SUITE_P(Devices, RgcnTest, testing::ValuesIn(all_devices()), device_name);

TEST(RgcnConv, ParametersHavePygNamesAndFlattenedShapes) {
  Generator gen(1);
  auto names_and_shapes = [](const RGCNConv& conv) {
    std::vector<std::string> out;
    for (const auto& [name, p] : conv.named_parameters()) out.push_back(name + p.value().shape_str());
    return out;
  };
  RGCNConvOptions bases, blocks;
  bases.num_bases = 2;
  blocks.num_blocks = 2;
  EXPECT_EQ(names_and_shapes(RGCNConv(4, 6, 3, gen)),
            (std::vector<std::string>{"weight[12, 6]", "root[4, 6]", "bias[1, 6]"}));
  EXPECT_EQ(names_and_shapes(RGCNConv(4, 6, 3, gen, bases)),
            (std::vector<std::string>{"weight[8, 6]", "comp[3, 2]", "root[4, 6]", "bias[1, 6]"}));
  EXPECT_EQ(names_and_shapes(RGCNConv(4, 6, 3, gen, blocks)),
            (std::vector<std::string>{"weight[12, 3]", "root[4, 6]", "bias[1, 6]"}));
  RGCNConv conv(4, 6, 3, gen, bases);
  RGCNConv copy(4, 6, 3, gen, bases);
  copy.load_state_dict(conv.state_dict());
  EXPECT_EQ(copy.relation_weight(2).value().to_host_vector(), conv.relation_weight(2).value().to_host_vector());
}

TEST(RgcnConv, RejectsBadArgumentsNamingThem) {
  Generator gen(1);
  RGCNConvOptions blocks, both;
  blocks.num_blocks = 2;
  both.num_bases = 2;
  both.num_blocks = 2;
  expect_invalid([&] { RGCNConv(5, 4, 2, gen, blocks); }, "in_features (5) must be divisible by num_blocks (2)");
  expect_invalid([&] { RGCNConv(4, 5, 2, gen, blocks); }, "out_features (5) must be divisible by num_blocks (2)");
  expect_invalid([&] { RGCNConv(4, 4, 2, gen, both); }, "cannot both be set");
  expect_invalid([&] { RGCNConv(4, 4, 0, gen); }, "num_relations (0)");
  RGCNConv conv(2, 2, 2, gen);
  const Graph graph = Graph::from_coo(std::vector<int64_t>{0, 1, 2}, std::vector<int64_t>{1, 2, 0}, 3);
  Variable x(Tensor::zeros(3, 2));
  expect_invalid([&] { conv.forward(graph, std::vector<int64_t>{0, 1, 2}, x); },
                 "edge_type[2] (2) must lie in [0, num_relations = 2)");
  expect_invalid([&] { conv.forward(graph, std::vector<int64_t>{0, -1, 0}, x); }, "edge_type[1] (-1)");
  expect_invalid([&] { conv.forward(graph, std::vector<int64_t>{0, 1}, x); }, "edge_type.size() (2)");
  expect_invalid([&] { conv.forward(std::vector<Graph>{graph}, x); }, "relation_graphs.size() (1)");
  expect_invalid([&] { conv.forward(graph, std::vector<int64_t>{0, 1, 0}, Variable(Tensor::zeros(3, 3))); },
                 "x has 3 columns");
  expect_invalid([&] { conv.relation_weight(2); }, "r (2)");
}

}  // namespace
}  // namespace edgewise::test
