// Relational aggregation against a double loop over every relation's edges and an
// elementwise combine (sum / mean / max), gradients by finite differences of that
// loop, on every device; missing or misshapen features are named.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "edgewise/gnn/autograd/shape_ops.hpp"
#include "edgewise/gnn/message_passing/hetero_aggregate.hpp"
#include "gnn_test_data.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

const EdgeType kWrites{"author", "writes", "paper"};
const EdgeType kCites{"paper", "cites", "paper"};
const EdgeType kWrittenBy{"paper", "written_by", "author"};
constexpr int64_t kAuthors = 4, kPapers = 7, kC = 3;

struct Relation {
  EdgeType type;
  std::vector<int64_t> src, dst;
  std::vector<float> weight;
};

// writes: authors -> papers 0..5 (paper 6 receives nothing); cites weighted, paper 6
// isolated; written_by: the reverse of writes.
std::vector<Relation> relations() {
  std::mt19937_64 rng = rng_for(31);
  EdgeList w = random_edges(kPapers, 10, rng(), 5);
  for (int64_t& s : w.src) s %= kAuthors;
  EdgeList c = random_edges(kPapers, 14, rng(), 5);
  std::vector<float> cw;
  for (size_t k = 0; k < c.src.size(); ++k) cw.push_back(0.25f * static_cast<float>(k % 4 + 1));
  return {{kWrites, w.src, w.dst, {}}, {kCites, c.src, c.dst, cw}, {kWrittenBy, w.dst, w.src, {}}};
}

HeteroGraph build(const std::vector<Relation>& rels, Device device) {
  HeteroGraph g;
  g.add_node_type("author", kAuthors);
  g.add_node_type("paper", kPapers);
  for (const Relation& r : rels) g.add_edge_type(r.type, r.src, r.dst, r.weight, device);
  return g;
}

int64_t count_of(const std::string& type) { return type == "author" ? kAuthors : kPapers; }

// One relation in double: op over the weighted messages of each destination, 0 when none.
Flat relation_ref(const Relation& r, const Flat& x_src, ReduceOp op) {
  const int64_t n = count_of(r.type.dst_type);
  Flat out(static_cast<size_t>(n * kC), 0.0);
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t c = 0; c < kC; ++c) {
      double acc = op == ReduceOp::Max ? -1e300 : 0.0;
      int64_t deg = 0;
      for (size_t e = 0; e < r.src.size(); ++e) {
        if (r.dst[e] != v) continue;
        const double m = (r.weight.empty() ? 1.0 : r.weight[e]) * x_src[r.src[e] * kC + c];
        acc = op == ReduceOp::Max ? std::max(acc, m) : acc + m;
        ++deg;
      }
      if (deg > 0) out[v * kC + c] = op == ReduceOp::Mean ? acc / static_cast<double>(deg) : acc;
    }
  }
  return out;
}

Flat combine_ref(const std::vector<Flat>& parts, ReduceOp op) {
  Flat out = parts[0];
  for (size_t k = 1; k < parts.size(); ++k)
    for (size_t i = 0; i < out.size(); ++i) out[i] = op == ReduceOp::Max ? std::max(out[i], parts[k][i]) : out[i] + parts[k][i];
  if (op == ReduceOp::Mean)
    for (double& v : out) v /= static_cast<double>(parts.size());
  return out;
}

// [paper rows; author rows] of the whole hetero aggregation, in double.
Flat hetero_ref(const std::vector<Relation>& rels, const Flat& x_author, const Flat& x_paper,
                const HeteroAggregationOptions& o) {
  Flat out;
  for (const std::string dst : {"paper", "author"}) {
    std::vector<Flat> parts;
    for (const Relation& r : rels) {
      if (r.type.dst_type == dst) parts.push_back(relation_ref(r, r.type.src_type == "author" ? x_author : x_paper, o.relation.op));
    }
    const Flat combined = combine_ref(parts, o.combine);
    out.insert(out.end(), combined.begin(), combined.end());
  }
  return out;
}

using HeteroAggregateTest = DeviceTest;

TEST_P(HeteroAggregateTest, MatchesTheLoopWithGradients) {
  const std::vector<Relation> rels = relations();
  const HeteroGraph graph = build(rels, device());
  uint64_t seed = 40;
  for (ReduceOp relation_op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
    for (ReduceOp combine : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
      HeteroAggregationOptions o;
      o.relation.op = relation_op;
      o.combine = combine;
      check_gradients({"relation " + std::string(to_string(relation_op)) + ", combine " + std::string(to_string(combine)),
                       {{kAuthors, kC}, {kPapers, kC}},
                       {},
                       [&](const std::vector<Variable>& v) {
                         NodeFeatureMap out = hetero_aggregate(graph, {{"author", v[0]}, {"paper", v[1]}}, o);
                         EXPECT_EQ(out.size(), 2u);
                         return concat_rows({out.at("paper"), out.at("author")});
                       },
                       [&](const std::vector<Flat>& x) { return hetero_ref(rels, x[0], x[1], o); }},
                      device(), ++seed);
    }
  }
}

TEST_P(HeteroAggregateTest, CombineElementwiseOverTheOpList) {
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
    for (int parts : {1, 3}) {
      std::vector<Shape> shapes(static_cast<size_t>(parts), Shape{5, 2});
      check_gradients({"combine " + std::string(to_string(op)) + " of " + std::to_string(parts),
                       shapes,
                       {},
                       [&](const std::vector<Variable>& v) { return combine_elementwise(v, op); },
                       [&](const std::vector<Flat>& x) { return combine_ref(x, op); }},
                      device(), 50 + static_cast<uint64_t>(parts));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, HeteroAggregateTest, testing::ValuesIn(all_devices()), device_name);

TEST(HeteroAggregate, MissingOrMisshapenFeaturesAreNamed) {
  const HeteroGraph graph = build(relations(), Device::cpu());
  Variable authors(Tensor::zeros(kAuthors, kC)), papers(Tensor::zeros(kPapers, kC));
  expect_invalid([&] { hetero_aggregate(graph, {{"paper", papers}}); }, "no features for node type 'author'");
  expect_invalid([&] { hetero_aggregate(graph, {{"author", authors}, {"paper", Variable(Tensor::zeros(3, kC))}}); },
                 "x['paper'] has 3 rows, node type 'paper' has 7 nodes");
  expect_invalid([&] { hetero_aggregate(graph, {{"author", Variable(Tensor::zeros(kAuthors, 2))}, {"paper", papers}}); },
                 "relations into 'paper' must agree");
  expect_invalid([&] { aggregate_relation(graph, kWrites, papers); }, "x_src has 7 rows, node type 'author' has 4");
  expect_invalid([&] { aggregate_relation(graph, {"author", "cites", "paper"}, authors); }, "is not an edge type");
  expect_invalid([&] { combine_elementwise({authors, papers}, ReduceOp::Sum); }, "parts[1] has shape [7, 3]");
}

TEST(HeteroAggregate, TypesWithoutIncomingRelationsGetNoOutput) {
  HeteroGraph g;
  g.add_node_type("a", 3);
  g.add_node_type("b", 2);
  g.add_edge_type({"a", "to", "b"}, {0, 2}, {1, 1});
  NodeFeatureMap out = hetero_aggregate(g, {{"a", Variable(Tensor::full(3, 1, 1.0f))}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.at("b").value().to_host_vector(), (std::vector<float>{0.0f, 2.0f}));
}

}  // namespace
}  // namespace edgewise::test
