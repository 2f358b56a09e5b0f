// Graph::find_edges against a naive scan of the CSR edges, on seeded random graphs
// with duplicates, self loops, hubs and empty segments, and its argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

#include "edgewise/gnn/graph/graph.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Graph;

// The smallest CSR position k with coo()[k] == (u, v), or -1.
std::vector<int64_t> naive_find(const Graph& g, const std::vector<int64_t>& u, const std::vector<int64_t>& v) {
  const auto [src, dst] = g.coo();
  std::vector<int64_t> out(u.size(), -1);
  for (size_t i = 0; i < u.size(); ++i) {
    for (size_t k = 0; k < src.size(); ++k) {
      if (src[k] == u[i] && dst[k] == v[i]) {
        out[i] = static_cast<int64_t>(k);
        break;
      }
    }
  }
  return out;
}

struct RandomGraph {
  Graph graph;
  std::vector<int64_t> src, dst;
};

// Edges concentrated on a few hubs (long segments) plus uniform ones, with
// duplicates (edges drawn again) and self loops.
RandomGraph random_graph(std::mt19937_64& rng, int64_t n, int64_t e) {
  std::uniform_int_distribution<int64_t> node(0, n - 1), hub(0, std::min<int64_t>(n - 1, 2));
  std::bernoulli_distribution coin(0.3);
  RandomGraph r;
  for (int64_t i = 0; i < e; ++i) {
    if (i > 0 && coin(rng) && coin(rng)) {  // a duplicate of an earlier edge
      const auto k = std::uniform_int_distribution<size_t>(0, r.src.size() - 1)(rng);
      r.src.push_back(r.src[k]);
      r.dst.push_back(r.dst[k]);
      continue;
    }
    const int64_t u = coin(rng) ? hub(rng) : node(rng);
    r.src.push_back(u);
    r.dst.push_back(coin(rng) && coin(rng) ? u : node(rng));
  }
  r.graph = Graph::from_coo(r.src, r.dst, n);
  return r;
}

TEST(FindEdges, MatchesNaiveScanOnRandomGraphs) {
  auto rng = rng_for(901);
  for (auto [n, e] : {std::pair<int64_t, int64_t>{1, 3}, {5, 0}, {7, 40}, {50, 300}, {200, 3000}}) {
    SCOPED_TRACE(testing::Message() << "n " << n << " e " << e);
    const RandomGraph r = random_graph(rng, n, e);
    // Every edge (both directions), then random pairs, in shuffled order.
    std::vector<int64_t> u, v;
    for (size_t k = 0; k < r.src.size(); ++k) {
      u.insert(u.end(), {r.src[k], r.dst[k]});
      v.insert(v.end(), {r.dst[k], r.src[k]});
    }
    std::uniform_int_distribution<int64_t> node(0, n - 1);
    for (int i = 0; i < 500; ++i) {
      u.push_back(node(rng));
      v.push_back(node(rng));
    }
    std::vector<size_t> perm(u.size());
    std::iota(perm.begin(), perm.end(), size_t{0});
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> us, vs;
    for (size_t p : perm) {
      us.push_back(u[p]);
      vs.push_back(v[p]);
    }
    const std::vector<int64_t> got = r.graph.find_edges(us, vs);
    EXPECT_EQ(got, naive_find(r.graph, us, vs));
    // The hits point at the queried edge in CSR order.
    const auto [csr_src, csr_dst] = r.graph.coo();
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] < 0) continue;
      EXPECT_EQ(csr_src[got[i]], us[i]);
      EXPECT_EQ(csr_dst[got[i]], vs[i]);
    }
  }
}

TEST(FindEdges, DuplicatesGiveTheFirstCsrPositionAndSelfLoopsAreFound) {
  //                        0  1  2  3  4  5
  const std::vector<int64_t> src = {2, 0, 2, 1, 1, 2};
  const std::vector<int64_t> dst = {1, 1, 1, 1, 0, 2};
  const Graph g = Graph::from_coo(src, dst, 3);
  // CSR by destination, stable: dst 0: e4 (1->0); dst 1: e0 (2->1), e1 (0->1), e2 (2->1), e3 (1->1); dst 2: e5.
  EXPECT_EQ(g.find_edges(std::vector<int64_t>{2, 1, 1, 2, 0, 1, 0}, std::vector<int64_t>{1, 1, 0, 2, 2, 2, 0}),
            (std::vector<int64_t>{1, 4, 0, 5, -1, -1, -1}));
}

TEST(FindEdges, EmptyQueriesAndEmptyGraph) {
  const Graph g = Graph::from_coo(std::vector<int64_t>{0}, std::vector<int64_t>{1}, 2);
  EXPECT_TRUE(g.find_edges(std::vector<int64_t>{}, std::vector<int64_t>{}).empty());
  const Graph empty = Graph::from_coo(std::vector<int64_t>{}, std::vector<int64_t>{}, 4);
  EXPECT_EQ(empty.find_edges(std::vector<int64_t>{0, 3}, std::vector<int64_t>{3, 3}), (std::vector<int64_t>{-1, -1}));
}

TEST(FindEdges, RejectsBadIdsNamingTheArgument) {
  const Graph g = Graph::from_coo(std::vector<int64_t>{0, 1}, std::vector<int64_t>{1, 2}, 3);
  auto message = [&](std::vector<int64_t> u, std::vector<int64_t> v) {
    try {
      g.find_edges(u, v);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({0, 3}, {1, 1}).find("src[1] (3) must lie in [0, 3)"), std::string::npos);
  EXPECT_NE(message({0, 1}, {-1, 1}).find("dst[0] (-1)"), std::string::npos);
  EXPECT_NE(message({0, 1}, {1}).find("src has 2 ids but dst has 1"), std::string::npos);
}

}  // namespace
}  // namespace edgewise::test
