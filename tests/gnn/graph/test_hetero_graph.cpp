// HeteroGraph: per-relation graphs hold exactly the given edges (ids unchanged, over
// max(num_src, num_dst) nodes), the stacked layout shifts destinations, accessors
// keep insertion order, and every bad argument is named and leaves the graph as it was.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "edgewise/gnn/graph/hetero_graph.hpp"
#include "edgewise/gnn/graph/relation_split.hpp"
#include "gnn_test_data.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

const EdgeType kWrites{"author", "writes", "paper"};
const EdgeType kCites{"paper", "cites", "paper"};
const EdgeType kWrittenBy{"paper", "written_by", "author"};

// 4 authors, 7 papers; random relations seeded from the run seed.
HeteroGraph small_graph(Device device, EdgeList& writes, EdgeList& cites) {
  std::mt19937_64 rng = rng_for(1);
  HeteroGraph g;
  g.add_node_type("author", 4);
  g.add_node_type("paper", 7);
  writes = random_edges(7, 12, rng(), 6);
  for (int64_t& s : writes.src) s %= 4;  // sources are authors
  cites = random_edges(7, 15, rng(), 5);  // paper 6 isolated
  g.add_edge_type(kWrites, writes.src, writes.dst, {}, device);
  g.add_edge_type(kCites, cites.src, cites.dst, {}, device);
  g.add_edge_type(kWrittenBy, writes.dst, writes.src, {}, device);
  return g;
}

using HeteroGraphTest = DeviceTest;

TEST_P(HeteroGraphTest, RelationsHoldTheirEdgesWithIdsUnchanged) {
  EdgeList writes, cites;
  const HeteroGraph g = small_graph(device(), writes, cites);
  EXPECT_EQ(g.node_types(), (std::vector<std::string>{"author", "paper"}));
  EXPECT_EQ(g.edge_types(), (std::vector<EdgeType>{kWrites, kCites, kWrittenBy}));
  EXPECT_EQ(g.edge_types_into("paper"), (std::vector<EdgeType>{kWrites, kCites}));
  EXPECT_EQ(g.edge_types_into("author"), (std::vector<EdgeType>{kWrittenBy}));
  EXPECT_EQ(g.num_nodes("author"), 4);
  EXPECT_EQ(g.num_nodes("paper"), 7);
  EXPECT_TRUE(g.has_edge_type(kCites));
  EXPECT_FALSE(g.has_edge_type(EdgeType{"author", "cites", "paper"}));
  for (const EdgeType& t : g.edge_types()) {
    EXPECT_EQ(g.graph(t).num_nodes(), 7) << to_string(t) << ": max(num_src, num_dst) nodes";
    EXPECT_EQ(g.graph(t).device(), device());
  }
  EXPECT_EQ(edges_of(g.graph(kWrites)), sorted_pairs(writes.src, writes.dst));
  EXPECT_EQ(edges_of(g.graph(kCites)), sorted_pairs(cites.src, cites.dst));
  EXPECT_EQ(edges_of(g.graph(kWrittenBy)), sorted_pairs(writes.dst, writes.src));
}

TEST_P(HeteroGraphTest, StackedLayoutPutsDestinationsAfterSources) {
  EdgeList writes, cites;
  const HeteroGraph g = small_graph(device(), writes, cites);
  const Graph& stacked = g.stacked_graph(kWrittenBy);  // paper (7) -> author (4)
  EXPECT_EQ(stacked.num_nodes(), 11);
  std::vector<int64_t> shifted = writes.src;
  for (int64_t& v : shifted) v += 7;
  EXPECT_EQ(edges_of(stacked), sorted_pairs(writes.dst, shifted));
  EXPECT_EQ(&g.stacked_graph(kWrittenBy), &stacked) << "built once";
  const HeteroGraph copy = g;
  EXPECT_EQ(copy.stacked_graph(kWrittenBy).id(), stacked.id()) << "copies share the relation";
}

TEST_P(HeteroGraphTest, EdgeWeightsFollowTheirEdges) {
  HeteroGraph g;
  g.add_node_type("a", 2);
  g.add_node_type("b", 3);
  g.add_edge_type({"a", "r", "b"}, {1, 0, 1}, {2, 2, 0}, {0.5f, 2.0f, 3.0f}, device());
  const Graph& rel = g.graph({"a", "r", "b"});
  const Graph& stacked = g.stacked_graph({"a", "r", "b"});
  for (const Graph* graph : {&rel, &stacked}) {
    auto [src, dst] = graph->to(Device::cpu()).coo();
    const std::vector<float> w = graph->edge_weight().to_host_vector();
    const int64_t shift = graph == &stacked ? 2 : 0;
    for (size_t k = 0; k < src.size(); ++k) {
      const float want = src[k] == 0 ? 2.0f : (dst[k] == 2 + shift ? 0.5f : 3.0f);
      EXPECT_EQ(w[k], want) << "edge " << src[k] << " -> " << dst[k];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, HeteroGraphTest, testing::ValuesIn(all_devices()), device_name);

TEST(HeteroGraph, EmptyRelationsAndTypesWithoutNodes) {
  HeteroGraph g;
  g.add_node_type("a", 0);
  g.add_node_type("b", 3);
  g.add_edge_type({"b", "none", "b"}, {}, {});
  g.add_edge_type({"a", "none", "b"}, {}, {});
  EXPECT_EQ(g.graph({"b", "none", "b"}).num_edges(), 0);
  EXPECT_EQ(g.graph({"a", "none", "b"}).num_nodes(), 3);
  EXPECT_EQ(g.stacked_graph({"a", "none", "b"}).num_nodes(), 3);
  EXPECT_TRUE(g.edge_types_into("a").empty());
}

TEST(HeteroGraph, BadArgumentsAreNamedAndLeaveTheGraphUnchanged) {
  HeteroGraph g;
  g.add_node_type("author", 2);
  g.add_node_type("paper", 3);
  g.add_edge_type(kWrites, {0, 1}, {2, 0});
  expect_invalid([&] { g.add_node_type("paper", 1); }, "node type 'paper' is already present");
  expect_invalid([&] { g.add_node_type("venue", -1); }, "count (-1)");
  expect_invalid([&] { g.add_node_type("", 1); }, "type must not be empty");
  expect_invalid([&] { g.add_edge_type({"venue", "hosts", "paper"}, {0}, {0}); },
                 "edge_type.src_type 'venue'");
  expect_invalid([&] { g.add_edge_type({"paper", "in", "venue"}, {0}, {0}); }, "edge_type.dst_type 'venue'");
  expect_invalid([&] { g.add_edge_type(kWrites, {0}, {0}); }, "edge type ('author', 'writes', 'paper') is already present");
  expect_invalid([&] { g.add_edge_type(kWrittenBy, {0, 3}, {0, 1}); },
                 "src[1] (3) of edge type ('paper', 'written_by', 'author') must lie in [0, 3)");
  expect_invalid([&] { g.add_edge_type(kWrittenBy, {0, 2}, {0, 2}); }, "dst[1] (2)");
  expect_invalid([&] { g.add_edge_type(kWrittenBy, {0, -1}, {0, 0}); }, "src[1] (-1)");
  expect_invalid([&] { g.add_edge_type(kWrittenBy, {0, 1}, {0}); }, "src.size() (2) must equal dst.size() (1)");
  expect_invalid([&] { g.add_edge_type(kWrittenBy, {0}, {0}, {1.0f, 2.0f}); }, "edge_weight.size() (2)");
  expect_invalid([&] { g.num_nodes("venue"); }, "type 'venue' is not a node type");
  expect_invalid([&] { g.graph(kCites); }, "edge_type ('paper', 'cites', 'paper') is not an edge type");
  expect_invalid([&] { g.edge_types_into("venue"); }, "dst_type 'venue'");
  // None of the rejected calls left anything behind.
  EXPECT_EQ(g.node_types(), (std::vector<std::string>{"author", "paper"}));
  EXPECT_EQ(g.edge_types(), (std::vector<EdgeType>{kWrites}));
  g.add_edge_type(kWrittenBy, {2}, {1});  // the rejected edge type is still free
  EXPECT_EQ(g.graph(kWrittenBy).num_edges(), 1);
  EXPECT_EQ(to_string(kWrittenBy), "paper__written_by__author");
}

TEST(RelationSplit, RelationsPartitionTheEdgesWithTheirWeights) {
  const EdgeList e = random_edges(8, 25, rng_for(2)());
  std::vector<int64_t> type;
  std::vector<float> weight;
  for (size_t k = 0; k < e.src.size(); ++k) {
    type.push_back(static_cast<int64_t>(k % 3 == 2 ? 3 : k % 3));  // relation 2 empty
    weight.push_back(static_cast<float>(k + 1));
  }
  const Graph graph = Graph::from_coo(e.src, e.dst, 8, weight);
  const std::vector<Graph> split = split_by_relation(graph, type, 4);
  ASSERT_EQ(split.size(), 4u);
  EXPECT_EQ(split[2].num_edges(), 0);
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(split[r].num_nodes(), 8);
    std::vector<std::tuple<int64_t, int64_t, float>> want, got;
    for (size_t k = 0; k < e.src.size(); ++k)
      if (type[k] == r) want.emplace_back(e.src[k], e.dst[k], weight[k]);
    auto [src, dst] = split[r].coo();
    const std::vector<float> w = split[r].num_edges() ? split[r].edge_weight().to_host_vector() : std::vector<float>{};
    for (size_t k = 0; k < src.size(); ++k) got.emplace_back(src[k], dst[k], w[k]);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "relation " << r;
  }
  expect_invalid([&] { split_by_relation(graph, std::vector<int64_t>(25, 4), 4); }, "edge_type[0] (4)");
  expect_invalid([&] { split_by_relation(graph, std::vector<int64_t>(3, 0), 4); }, "edge_type.size() (3)");
}

}  // namespace
}  // namespace edgewise::test
