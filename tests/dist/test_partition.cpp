// partition() and build_part(): the parts of a partition together are exactly the
// input graph, the halo maps agree between ranks, and the edge cut is what a naive
// count over the edges gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "edgewise/gnn/dist/partition.hpp"
#include "edgewise/gnn/data/npz_writer.hpp"
#include "edgewise/gnn/data/synthetic.hpp"

namespace {

using namespace edgewise::gnn;
using namespace edgewise::gnn::dist;

Dataset small_graph(int64_t nodes = 300, uint64_t seed = 3) {
  PlantedPartitionParams params;
  params.num_nodes = nodes;
  params.num_classes = 3;
  params.num_features = 40;
  params.feature_density = 0.1;
  params.train_per_class = 10;
  params.num_valid = 50;
  params.num_test = 100;
  return planted_partition(params, seed);
}

PartitionOptions seeded(uint64_t seed) {
  PartitionOptions o;
  o.seed = seed;
  return o;
}

std::vector<float> feature_row(const Features& f, int64_t r) {
  Features copy = f;
  copy.to_dense();
  return {copy.dense.begin() + r * copy.cols, copy.dense.begin() + (r + 1) * copy.cols};
}

// Every check of the round trip: owned nodes, edges (in input order per
// destination part), features, labels, splits and the agreement of send and
// receive maps.
void expect_round_trip(const Dataset& d, const Partition& p) {
  const int64_t k = p.num_parts;
  std::vector<Part> parts;
  for (int64_t r = 0; r < k; ++r) parts.push_back(build_part(d, p, r));
  std::vector<int> owned_count(static_cast<size_t>(d.num_nodes), 0);
  std::multiset<std::pair<int64_t, int64_t>> edges;
  std::set<int64_t> train, valid, test;
  for (const Part& part : parts) {
    const Dataset& l = part.local;
    ASSERT_NO_THROW(l.validate());
    for (int64_t i = 0; i < part.num_owned; ++i) {
      const int64_t g = part.global_ids[static_cast<size_t>(i)];
      ++owned_count[static_cast<size_t>(g)];
      EXPECT_EQ(p.part[static_cast<size_t>(g)], part.rank);
    }
    for (int64_t i = 0; i < part.num_local(); ++i) {
      const int64_t g = part.global_ids[static_cast<size_t>(i)];
      EXPECT_EQ(l.labels[static_cast<size_t>(i)], d.labels[static_cast<size_t>(g)]);
      EXPECT_EQ(feature_row(l.features, i), feature_row(d.features, g)) << "local row " << i;
    }
    for (int64_t e = 0; e < l.num_edges(); ++e) {
      const int64_t s = l.src()[static_cast<size_t>(e)], t = l.dst()[static_cast<size_t>(e)];
      EXPECT_LT(t, part.num_owned) << "edges go into owned nodes only";
      edges.emplace(part.global_ids[static_cast<size_t>(s)], part.global_ids[static_cast<size_t>(t)]);
    }
    for (auto [list, out] : {std::pair{&l.train_idx, &train}, {&l.valid_idx, &valid}, {&l.test_idx, &test}})
      for (int64_t i : *list) out->insert(part.global_ids[static_cast<size_t>(i)]);
    // The halo is sorted by (owner, id) and grouped as recv_offsets says.
    for (int64_t s = 0; s < k; ++s) {
      for (int64_t i = part.recv_offsets[static_cast<size_t>(s)]; i < part.recv_offsets[static_cast<size_t>(s) + 1]; ++i)
        EXPECT_EQ(part.halo_owner[static_cast<size_t>(i)], s);
    }
    EXPECT_EQ(part.send_offsets[static_cast<size_t>(part.rank) + 1] - part.send_offsets[static_cast<size_t>(part.rank)],
              0);
  }
  for (int64_t v = 0; v < d.num_nodes; ++v) EXPECT_EQ(owned_count[static_cast<size_t>(v)], 1) << "node " << v;
  std::multiset<std::pair<int64_t, int64_t>> input;
  for (int64_t e = 0; e < d.num_edges(); ++e) input.emplace(d.src()[static_cast<size_t>(e)], d.dst()[static_cast<size_t>(e)]);
  EXPECT_EQ(edges, input);
  EXPECT_EQ(train, std::set<int64_t>(d.train_idx.begin(), d.train_idx.end()));
  EXPECT_EQ(valid, std::set<int64_t>(d.valid_idx.begin(), d.valid_idx.end()));
  EXPECT_EQ(test, std::set<int64_t>(d.test_idx.begin(), d.test_idx.end()));
  // What r sends to s is, in order, what s receives from r.
  for (const Part& r : parts) {
    for (const Part& s : parts) {
      std::vector<int64_t> sent, received;
      for (int64_t i = r.send_offsets[static_cast<size_t>(s.rank)]; i < r.send_offsets[static_cast<size_t>(s.rank) + 1]; ++i)
        sent.push_back(r.global_ids[static_cast<size_t>(r.send_index[static_cast<size_t>(i)])]);
      for (int64_t i = s.recv_offsets[static_cast<size_t>(r.rank)]; i < s.recv_offsets[static_cast<size_t>(r.rank) + 1]; ++i)
        received.push_back(s.global_ids[static_cast<size_t>(s.num_owned + i)]);
      EXPECT_EQ(sent, received) << r.rank << " -> " << s.rank;
    }
  }
  // Edge cut, naively.
  int64_t cut = 0;
  for (int64_t e = 0; e < d.num_edges(); ++e)
    cut += p.part[static_cast<size_t>(d.src()[static_cast<size_t>(e)])] != p.part[static_cast<size_t>(d.dst()[static_cast<size_t>(e)])];
  EXPECT_EQ(p.edge_cut, cut);
}

TEST(Partition, RoundTripsForSeveralK) {
  const Dataset d = small_graph();
  for (int64_t k : {1, 2, 3, 5}) {
    SCOPED_TRACE("k = " + std::to_string(k));
    const Partition p = partition(d, k, seeded(7));
    EXPECT_EQ(p.num_parts, k);
    for (int64_t nodes : p.part_nodes) EXPECT_GT(nodes, 0);
    EXPECT_LE(p.node_balance(), 1.1);
    expect_round_trip(d, p);
  }
}

TEST(Partition, OnePartIsTheWholeGraph) {
  const Dataset d = small_graph(120);
  const Partition p = partition(d, 1);
  EXPECT_EQ(p.edge_cut, 0);
  const Part part = build_part(d, p, 0);
  EXPECT_EQ(part.num_owned, d.num_nodes);
  EXPECT_EQ(part.num_halo(), 0);
  EXPECT_EQ(part.local.edge_index, d.edge_index);
  EXPECT_EQ(part.local.train_idx, d.train_idx);
}

TEST(Partition, SeparateCommunitiesAreNotCut) {
  // Two cliques of 6 joined by nothing: the best 2-way cut is 0.
  std::vector<int64_t> src, dst;
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t u = 0; u < 6; ++u)
      for (int64_t v = 0; v < 6; ++v)
        if (u != v) src.push_back(6 * c + u), dst.push_back(6 * c + v);
  const Partition p = partition(src, dst, 12, 2);
  EXPECT_EQ(p.edge_cut, 0);
  EXPECT_EQ(p.part_nodes, (std::vector<int64_t>{6, 6}));
}

TEST(Partition, IsolatedNodesAreOwnedOnceAndNeverHalo) {
  Dataset d = small_graph(200);
  d.num_nodes += 10;  // 10 isolated nodes at the end
  d.labels.resize(static_cast<size_t>(d.num_nodes), 0);
  Features& f = d.features;
  f.to_dense();
  f.rows = d.num_nodes;
  f.dense.resize(static_cast<size_t>(f.rows * f.cols), 0.5f);
  for (int64_t k : {2, 4}) {
    const Partition p = partition(d, k, seeded(1));
    expect_round_trip(d, p);
    for (int64_t r = 0; r < k; ++r) {
      const Part part = build_part(d, p, r);
      for (int64_t i = part.num_owned; i < part.num_local(); ++i) EXPECT_LT(part.global_ids[static_cast<size_t>(i)], 200);
    }
  }
  // No edges at all: contiguous blocks.
  const Partition blocks = partition(std::vector<int64_t>{}, std::vector<int64_t>{}, 10, 3);
  EXPECT_EQ(blocks.part, (std::vector<int32_t>{0, 0, 0, 0, 1, 1, 1, 2, 2, 2}));
}

TEST(Partition, SameSeedSamePartition) {
  const Dataset d = small_graph();
  EXPECT_EQ(partition(d, 4, seeded(5)).part, partition(d, 4, seeded(5)).part);
}

TEST(Partition, BalancesTheGivenNodes) {
  const Dataset d = small_graph(400);
  PartitionOptions o;
  o.balance_nodes = d.train_idx;
  o.balance_edges = true;
  const Partition p = partition(d, 3, o);
  std::vector<int64_t> train_per_part(3, 0);
  for (int64_t v : d.train_idx) ++train_per_part[static_cast<size_t>(p.part[static_cast<size_t>(v)])];
  for (int64_t t : train_per_part) EXPECT_NEAR(static_cast<double>(t), 10.0, 2.0);
  expect_round_trip(d, p);
}

TEST(Partition, BadArgumentsAreNamed) {
  const Dataset d = small_graph(50);
  try {
    partition(d, 51);
    FAIL() << "k > N accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("k (51) must not exceed the number of nodes (50)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(partition(d, 0), std::invalid_argument);
  const Partition p = partition(d, 2);
  EXPECT_THROW(build_part(d, p, 2), std::invalid_argument);
  const std::vector<int64_t> src{0, 5}, dst{1, 0};
  EXPECT_THROW(partition(src, dst, 5, 2), std::invalid_argument);
}

TEST(Partition, PartFilesRoundTrip) {
  const Dataset d = small_graph(150);
  const Partition p = partition(d, 3, seeded(2));
  const auto dir = std::filesystem::temp_directory_path() / ("edgewise_parts_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int64_t r = 0; r < 3; ++r) {
    const Part part = build_part(d, p, r);
    const std::string path = (dir / ("part" + std::to_string(r) + ".npz")).string();
    write_part(path, part);
    const Part back = read_part(path);
    EXPECT_EQ(back.global_ids, part.global_ids);
    EXPECT_EQ(back.num_owned, part.num_owned);
    EXPECT_EQ(back.halo_owner, part.halo_owner);
    EXPECT_EQ(back.send_offsets, part.send_offsets);
    EXPECT_EQ(back.send_index, part.send_index);
    EXPECT_EQ(back.recv_offsets, part.recv_offsets);
    EXPECT_EQ(back.feature_value_base, part.feature_value_base);
    EXPECT_EQ(back.local.edge_index, part.local.edge_index);
    EXPECT_EQ(back.local.labels, part.local.labels);
    EXPECT_EQ(back.local.train_idx, part.local.train_idx);
    EXPECT_EQ(feature_row(back.local.features, 0), feature_row(part.local.features, 0));
  }
  // A send map pointing past the owned nodes is refused, naming the key.
  Part bad = build_part(d, p, 0);
  ASSERT_FALSE(bad.send_index.empty());
  bad.send_index[0] = bad.num_owned;
  const std::string path = (dir / "bad.npz").string();
  write_part(path, bad);
  try {
    read_part(path);
    FAIL() << "a bad send map was accepted";
  } catch (const DataFileError& e) {
    EXPECT_NE(std::string(e.what()).find("part_send_index"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
