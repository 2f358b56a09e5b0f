// Graph construction against a direct reference: CSR order, permutation, offsets,
// transposed CSR, degrees, self loops, GCN normalisation, validation, transfers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "edgewise/gnn/graph/graph.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Graph;

struct Coo {
  std::vector<int64_t> src, dst;
  std::vector<float> w;
};

Coo random_coo(std::mt19937_64& rng, int64_t n, int64_t e, bool weighted) {
  Coo c;
  std::uniform_int_distribution<int64_t> node(0, n - 1);
  std::uniform_real_distribution<float> weight(0.1f, 2.0f);
  for (int64_t i = 0; i < e; ++i) {
    c.src.push_back(node(rng));
    c.dst.push_back(i % 7 == 0 ? 0 : node(rng));  // a hub at node 0, duplicates likely
    if (weighted) c.w.push_back(weight(rng));
  }
  return c;
}

TEST(Graph, CsrIsAStableSortByDestinationWithThePermutationKept) {
  auto rng = rng_for(100);
  for (int64_t n : {1, 2, 9, 100}) {
    for (int64_t e : {0, 1, 50, 1000}) {
      Coo c = random_coo(rng, n, e, true);
      Graph g = Graph::from_coo(c.src, c.dst, n, c.w);
      ASSERT_EQ(g.num_nodes(), n);
      ASSERT_EQ(g.num_edges(), e);
      // Reference: stable order of input positions by destination.
      std::vector<int64_t> order(static_cast<size_t>(e));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return c.dst[a] < c.dst[b]; });
      EXPECT_EQ(g.edge_ids().to_host_vector(), order);
      auto src = g.sources().to_host_vector();
      auto dst = g.destinations().to_host_vector();
      auto w = g.edge_weight().to_host_vector();
      for (int64_t k = 0; k < e; ++k) {
        ASSERT_EQ(src[k], c.src[order[k]]);
        ASSERT_EQ(dst[k], c.dst[order[k]]);
        ASSERT_EQ(w[k], c.w[order[k]]);
      }
      auto off = g.offsets().to_host_vector();
      ASSERT_EQ(off.size(), static_cast<size_t>(n + 1));
      for (int64_t v = 0; v < n; ++v) {
        const int64_t count = std::count(c.dst.begin(), c.dst.end(), v);
        ASSERT_EQ(off[v + 1] - off[v], count) << "node " << v;
      }
    }
  }
}

TEST(Graph, TransposedCsrGroupsEdgesBySourceAndPointsBackToCsrPositions) {
  auto rng = rng_for(101);
  Coo c = random_coo(rng, 40, 500, false);
  Graph g = Graph::from_coo(c.src, c.dst, 40);
  const auto& t = g.transposed();
  auto off = t.offsets.to_host_vector();
  auto dst = t.destinations.to_host_vector();
  auto ids = t.edge_ids.to_host_vector();
  auto src = g.sources().to_host_vector();
  auto csr_dst = g.destinations().to_host_vector();
  std::vector<char> seen(500, 0);
  for (int64_t u = 0; u < 40; ++u) {
    int64_t prev = -1;
    for (int64_t k = off[u]; k < off[u + 1]; ++k) {
      ASSERT_EQ(src[ids[k]], u);
      ASSERT_EQ(csr_dst[ids[k]], dst[k]);
      ASSERT_GT(ids[k], prev) << "stable: CSR order within a source";
      prev = ids[k];
      seen[ids[k]]++;
    }
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 500) << "a permutation";
  EXPECT_EQ(&g.transposed(), &t) << "built once";
}

TEST(Graph, DegreesSelfLoopsAndGcnNormalisation) {
  // 0 -> 1, 2 -> 1, 1 -> 0, 1 -> 1 (a loop already), 2 isolated as destination.
  Graph g = Graph::from_coo(std::vector<int64_t>{0, 2, 1, 1}, std::vector<int64_t>{1, 1, 0, 1}, 3);
  EXPECT_EQ(g.in_degree().to_host_vector(), (std::vector<float>{1, 3, 0}));
  EXPECT_EQ(g.out_degree().to_host_vector(), (std::vector<float>{1, 2, 1}));
  Graph loops = g.with_self_loops();
  EXPECT_EQ(loops.num_edges(), 6) << "loops added only where missing (0 and 2)";
  EXPECT_EQ(loops.in_degree().to_host_vector(), (std::vector<float>{2, 3, 1}));
  Graph norm = g.gcn_normalized();
  auto [s, d] = norm.coo();
  auto w = norm.edge_weight().to_host_vector();
  const std::vector<double> deg = {2, 3, 1};
  for (size_t k = 0; k < w.size(); ++k) {
    EXPECT_NEAR(w[k], 1.0 / std::sqrt(deg[s[k]] * deg[d[k]]), 1e-6) << "edge " << s[k] << "->" << d[k];
  }
}

TEST(Graph, BadInputIsRejectedWithTheArgumentNamed) {
  auto expect_error = [](auto make, const std::string& needle) {
    try {
      make();
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error([] { Graph::from_coo(std::vector<int64_t>{0, 3}, std::vector<int64_t>{1, 1}, 3); }, "src[1] (3)");
  expect_error([] { Graph::from_coo(std::vector<int64_t>{0, 1}, std::vector<int64_t>{-1, 1}, 3); }, "dst[0] (-1)");
  expect_error([] { Graph::from_coo(std::vector<int64_t>{0}, std::vector<int64_t>{1, 1}, 3); }, "src has 1 edges");
  expect_error([] { Graph::from_coo(std::vector<int64_t>{0}, std::vector<int64_t>{1}, 3, {1.0f, 2.0f}); },
               "edge_weight has 2 values");
  expect_error([] { Graph::from_coo(std::vector<int64_t>{0}, std::vector<int64_t>{1}, 3, {NAN}); },
               "edge_weight[0] (nan) must be finite");
  expect_error([] { Graph::from_coo(std::vector<int64_t>{}, std::vector<int64_t>{}, -1); }, "num_nodes (-1)");
}

TEST(Graph, FromEdgeIndexMatchesFromCoo) {
  std::vector<int64_t> ei = {0, 1, 2, 2, /*dst*/ 1, 2, 0, 1};
  Graph a = Graph::from_edge_index(gnn::IndexTensor::from_host(ei, 2, 4), 3);
  Graph b = Graph::from_coo(std::vector<int64_t>{0, 1, 2, 2}, std::vector<int64_t>{1, 2, 0, 1}, 3);
  EXPECT_EQ(a.coo(), b.coo());
  EXPECT_EQ(a.offsets().to_host_vector(), b.offsets().to_host_vector());
}

using GraphDeviceTest = DeviceTest;
TEST_P(GraphDeviceTest, MovesBetweenDevicesIntact) {
  auto rng = rng_for(102);
  Coo c = random_coo(rng, 30, 200, true);
  Graph g = Graph::from_coo(c.src, c.dst, 30, c.w);
  Graph d = g.to(device());
  EXPECT_EQ(d.device(), device());
  Graph back = d.to(Device::cpu());
  EXPECT_EQ(back.coo(), g.coo());
  EXPECT_EQ(back.edge_weight().to_host_vector(), g.edge_weight().to_host_vector());
  EXPECT_EQ(d.transposed().offsets.to_host_vector(), g.transposed().offsets.to_host_vector());
}
INSTANTIATE_TEST_SUITE_P(Devices, GraphDeviceTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
