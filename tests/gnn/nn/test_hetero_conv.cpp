// HeteroConv against double references of its layers (bipartite SAGEConv by PyG's
// formula, GCNConv with the normalised adjacency), combined by sum / mean / max;
// gradients reach every input and parameter; PyG's parameter names; refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "edgewise/gnn/nn/hetero_conv.hpp"
#include "gnn_test_data.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

const EdgeType kWrites{"author", "writes", "paper"};
const EdgeType kCites{"paper", "cites", "paper"};
const EdgeType kWrittenBy{"paper", "written_by", "author"};
constexpr int64_t kAuthors = 4, kPapers = 7, kIn = 3, kOut = 2;

struct Edges {
  std::vector<int64_t> src, dst;
};

struct Bibliography {
  Edges writes, cites;
  HeteroGraph graph;
};

Bibliography bibliography(Device device) {
  std::mt19937_64 rng = rng_for(61);
  Bibliography s;
  EdgeList w = random_edges(kPapers, 10, rng(), 5);  // paper 6 unwritten
  for (int64_t& a : w.src) a %= kAuthors - 1;        // author 3 writes nothing
  EdgeList c = random_edges(kPapers, 12, rng(), 5);
  s.writes = {w.src, w.dst};
  s.cites = {c.src, c.dst};
  s.graph.add_node_type("author", kAuthors);
  s.graph.add_node_type("paper", kPapers);
  s.graph.add_edge_type(kWrites, w.src, w.dst, {}, device);
  s.graph.add_edge_type(kCites, c.src, c.dst, {}, device);
  s.graph.add_edge_type(kWrittenBy, w.dst, w.src, {}, device);
  return s;
}

Flat host(const Variable& v) {
  auto f = v.value().to_host_vector();
  return Flat(f.begin(), f.end());
}

// PyG's bipartite SAGEConv (mean): mean_{u -> v} x_src[u] W_l + b_l + x_dst[v] W_r.
Flat sage_ref(const SAGEConv& conv, const Edges& e, const Flat& x_src, const Flat& x_dst, int64_t num_dst) {
  std::map<std::string, Flat> p;
  for (const auto& [name, v] : conv.named_parameters()) p[name] = host(v);
  Flat out(static_cast<size_t>(num_dst * kOut), 0.0);
  for (int64_t v = 0; v < num_dst; ++v) {
    Flat mean(kIn, 0.0);
    int64_t deg = 0;
    for (size_t k = 0; k < e.src.size(); ++k) {
      if (e.dst[k] != v) continue;
      ++deg;
      for (int64_t c = 0; c < kIn; ++c) mean[c] += x_src[e.src[k] * kIn + c];
    }
    for (double& m : mean) m = deg ? m / static_cast<double>(deg) : 0.0;
    for (int64_t j = 0; j < kOut; ++j) {
      double acc = p.at("lin_l.bias")[j];
      for (int64_t c = 0; c < kIn; ++c) {
        acc += mean[c] * p.at("lin_l.weight")[c * kOut + j] + x_dst[v * kIn + c] * p.at("lin_r.weight")[c * kOut + j];
      }
      out[v * kOut + j] = acc;
    }
  }
  return out;
}

// GCN: D^-1/2 (A + remaining self loops) D^-1/2 (x W) + b over n nodes.
Flat gcn_ref(const GCNConv& conv, const Edges& e, const Flat& x, int64_t n) {
  const Flat w = host(conv.named_parameters()[0].second), b = host(conv.named_parameters()[1].second);
  Edges all = e;
  for (int64_t v = 0; v < n; ++v) {
    bool loop = false;
    for (size_t k = 0; k < e.src.size(); ++k) loop = loop || (e.src[k] == v && e.dst[k] == v);
    if (!loop) all.src.push_back(v), all.dst.push_back(v);
  }
  Flat deg(static_cast<size_t>(n), 0.0);
  for (int64_t d : all.dst) deg[d] += 1;
  Flat out(static_cast<size_t>(n * kOut), 0.0);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t j = 0; j < kOut; ++j) out[v * kOut + j] = b[j];
  for (size_t k = 0; k < all.src.size(); ++k) {
    const double norm = 1.0 / std::sqrt(deg[all.src[k]] * deg[all.dst[k]]);
    for (int64_t j = 0; j < kOut; ++j) {
      double xw = 0;
      for (int64_t c = 0; c < kIn; ++c) xw += x[all.src[k] * kIn + c] * w[c * kOut + j];
      out[all.dst[k] * kOut + j] += norm * xw;
    }
  }
  return out;
}

Flat combine(const Flat& a, const Flat& b, ReduceOp op) {
  Flat out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    out[i] = op == ReduceOp::Max ? std::max(a[i], b[i]) : (op == ReduceOp::Mean ? (a[i] + b[i]) / 2 : a[i] + b[i]);
  }
  return out;
}

struct Layers {
  std::shared_ptr<SAGEConv> writes, written_by;
  std::shared_ptr<GCNConv> cites;
};

HeteroConv make_conv(ReduceOp aggr, Layers& layers, Device device) {
  Generator gen(5);
  layers.writes = std::make_shared<SAGEConv>(kIn, kOut, gen, SAGEConvOptions{}, device);
  layers.cites = std::make_shared<GCNConv>(kIn, kOut, gen, GCNConvOptions{}, device);
  layers.written_by = std::make_shared<SAGEConv>(kIn, kOut, gen, SAGEConvOptions{}, device);
  HeteroConv conv(aggr);
  conv.add(kWrites, layers.writes);
  conv.add(kCites, layers.cites);
  conv.add(kWrittenBy, layers.written_by);
  return conv;
}

using HeteroConvTest = DeviceTest;

TEST_P(HeteroConvTest, EqualsItsLayersCombinedWithGradients) {
  const Bibliography s = bibliography(device());
  uint64_t seed = 70;
  for (ReduceOp aggr : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
    Layers layers;
    const HeteroConv conv = make_conv(aggr, layers, device());
    check_gradients({"HeteroConv aggr " + std::string(to_string(aggr)),
                     {{kAuthors, kIn}, {kPapers, kIn}},
                     {},
                     [&](const std::vector<Variable>& v) {
                       NodeFeatureMap out = conv.forward(s.graph, {{"author", v[0]}, {"paper", v[1]}});
                       EXPECT_EQ(out.size(), 2u);
                       return concat_rows({out.at("paper"), out.at("author")});
                     },
                     [&](const std::vector<Flat>& x) {
                       Flat paper = combine(sage_ref(*layers.writes, s.writes, x[0], x[1], kPapers),
                                            gcn_ref(*layers.cites, s.cites, x[1], kPapers), aggr);
                       const Flat author = sage_ref(*layers.written_by, {s.writes.dst, s.writes.src}, x[1], x[0], kAuthors);
                       paper.insert(paper.end(), author.begin(), author.end());
                       return paper;
                     }},
                    device(), ++seed);
    for (const auto& [name, p] : conv.named_parameters()) EXPECT_TRUE(p.has_grad()) << name << " got no gradient";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, HeteroConvTest, testing::ValuesIn(all_devices()), device_name);

TEST(HeteroConv, ParametersCarryPygModuleDictNames) {
  Layers layers;
  HeteroConv conv = make_conv(ReduceOp::Sum, layers, Device::cpu());
  std::vector<std::string> names;
  for (const auto& [name, p] : conv.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "convs.author__writes__paper.lin_l.weight", "convs.author__writes__paper.lin_l.bias",
                       "convs.author__writes__paper.lin_r.weight", "convs.paper__cites__paper.lin.weight",
                       "convs.paper__cites__paper.bias", "convs.paper__written_by__author.lin_l.weight",
                       "convs.paper__written_by__author.lin_l.bias", "convs.paper__written_by__author.lin_r.weight"}));
  EXPECT_EQ(conv.parameters().size(), names.size());
  EXPECT_EQ(conv.state_dict().keys(), names);
  conv.eval();
  EXPECT_FALSE(layers.cites->training()) << "train / eval reach the layers";
}

TEST(HeteroConv, RefusalsAreNamed) {
  Generator gen(1);
  const Bibliography s = bibliography(Device::cpu());
  HeteroConv conv;
  auto sage = std::make_shared<SAGEConv>(kIn, kOut, gen);
  conv.add(kWrites, sage);
  expect_invalid([&] { conv.add(kWrittenBy, std::make_shared<GCNConv>(kIn, kOut, gen)); },
                 "edge type ('paper', 'written_by', 'author') is bipartite");
  expect_invalid([&] { conv.add(kWrites, std::make_shared<SAGEConv>(kIn, kOut, gen)); }, "already has a layer");
  expect_invalid([&] { conv.add(kWrittenBy, sage); }, "is already the layer of ('author', 'writes', 'paper')");
  expect_invalid([&] { conv.add(kCites, std::shared_ptr<GCNConv>()); }, "is null");
  EXPECT_EQ(conv.edge_types(), (std::vector<EdgeType>{kWrites})) << "refused layers were not added";
  Variable authors(Tensor::zeros(kAuthors, kIn)), papers(Tensor::zeros(kPapers, kIn));
  expect_invalid([&] { conv.forward(s.graph, {{"author", authors}}); }, "no features for node type 'paper'");
  expect_invalid([&] { conv.forward(s.graph, {{"author", authors}, {"paper", Variable(Tensor::zeros(kPapers, 2))}}); },
                 "needs equal widths");
  HeteroGraph other;
  other.add_node_type("author", kAuthors);
  other.add_node_type("paper", kPapers);
  expect_invalid([&] { conv.forward(other, {{"author", authors}, {"paper", papers}}); },
                 "the graph has no edge type ('author', 'writes', 'paper')");
}

}  // namespace
}  // namespace edgewise::test
