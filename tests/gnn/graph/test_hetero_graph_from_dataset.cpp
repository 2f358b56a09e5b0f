// hetero_graph_from_dataset on a mag-like graph: the dataset's node and edge types
// in order with their counts, each relation holding exactly its edges, reverse
// relations (rev_<relation>) turning every edge round right after their forward
// type, and bad data rejected by HeteroGraph's checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/synthetic_hetero.hpp"
#include "edgewise/gnn/graph/hetero_graph_from_dataset.hpp"
#include "gnn_test_data.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

const HeteroDataset& small_mag() {
  static const HeteroDataset d = mag_like_graph({.papers = 2'000, .features = 1}, test_seed());
  return d;
}

using MagLikeHeteroGraphTest = DeviceTest;

TEST_P(MagLikeHeteroGraphTest, HasTheDatasetsTypesAndEdges) {
  const HeteroDataset& d = small_mag();
  const HeteroGraph g = hetero_graph_from_dataset(d, false, device());
  EXPECT_EQ(g.node_types(), (std::vector<std::string>{"paper", "author", "institution", "field_of_study"}));
  for (const NodeTypeData& t : d.node_types) EXPECT_EQ(g.num_nodes(t.name), t.count);
  const std::vector<EdgeType> expected = {{"paper", "cites", "paper"},
                                          {"author", "writes", "paper"},
                                          {"author", "affiliated_with", "institution"},
                                          {"paper", "has_topic", "field_of_study"}};
  EXPECT_EQ(g.edge_types(), expected);
  for (const EdgeTypeData& e : d.edge_types) {
    const Graph& r = g.graph(edge_type_of(e));
    EXPECT_EQ(r.device(), device());
    EXPECT_EQ(r.num_edges(), e.num_edges()) << e.relation;
    EXPECT_EQ(edges_of(r), sorted_pairs(e.src, e.dst)) << e.relation;
  }
}

TEST_P(MagLikeHeteroGraphTest, ReverseRelationsTurnEveryEdgeRound) {
  const HeteroDataset& d = small_mag();
  const HeteroGraph g = hetero_graph_from_dataset(d, true, device());
  const std::vector<EdgeType> expected = {{"paper", "cites", "paper"},
                                          {"author", "writes", "paper"},
                                          {"paper", "rev_writes", "author"},
                                          {"author", "affiliated_with", "institution"},
                                          {"institution", "rev_affiliated_with", "author"},
                                          {"paper", "has_topic", "field_of_study"},
                                          {"field_of_study", "rev_has_topic", "paper"}};
  EXPECT_EQ(g.edge_types(), expected);
  for (const EdgeTypeData& e : d.edge_types) {
    if (e.src_type == e.dst_type) continue;
    const Graph& rev = g.graph({e.dst_type, "rev_" + e.relation, e.src_type});
    EXPECT_EQ(rev.num_edges(), e.num_edges()) << e.relation;
    EXPECT_EQ(edges_of(rev), sorted_pairs(e.dst, e.src)) << e.relation;
  }
  // Every node type now receives messages.
  for (const std::string& type : g.node_types()) EXPECT_FALSE(g.edge_types_into(type).empty()) << type;
}

INSTANTIATE_TEST_SUITE_P(Devices, MagLikeHeteroGraphTest, testing::ValuesIn(all_devices()), device_name);

TEST(MagLikeHeteroGraph, BadDatasetsAreRejectedByHeteroGraph) {
  HeteroDataset d = small_mag();
  d.edge_types[1].dst[3] = d.node_types[0].count;  // one past the last paper
  expect_invalid([&] { (void)hetero_graph_from_dataset(d); }, "dst[3]");
  d = small_mag();
  d.edge_types[2].dst_type = "venue";
  expect_invalid([&] { (void)hetero_graph_from_dataset(d); }, "'venue'");
}

}  // namespace
}  // namespace edgewise::test
