// HeteroHopSampler (pyg-lib's hetero_neighbor_sample semantics): the full-fanout layout
// against an independent hop-by-hop reference written from the edge lists, validity of
// random samples (edges exist, per-destination counts, no repeats without
// replacement), determinism, empty seed types and relations, disjoint / temporal /
// weighted options (more cases field for field in tests/python/test_hetero_loader.py),
// and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "edgewise/gnn/sampling/hetero_hop_sampler.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

struct Edges {
  int64_t src_type, dst_type;
  std::vector<int64_t> src, dst;
};

// Three node types (paper 0, author 1, field 2) with paper->paper, author->paper,
// paper->author, field->paper edges, skewed degrees and parallel edges.
struct Fixture {
  std::vector<int64_t> num_nodes{40, 25, 6};
  std::vector<Edges> edges;
  explicit Fixture(uint64_t seed) {
    std::mt19937_64 rng(seed);
    const auto add = [&](int64_t s, int64_t d, int64_t m) {
      Edges e{s, d, {}, {}};
      for (int64_t k = 0; k < m; ++k) {
        const double u = std::uniform_real_distribution<double>(0, 1)(rng);
        e.src.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(num_nodes[s])));
        e.dst.push_back(static_cast<int64_t>(u * u * static_cast<double>(num_nodes[d])) % num_nodes[d]);
      }
      edges.push_back(std::move(e));
    };
    add(0, 0, 150);
    add(1, 0, 90);
    add(0, 1, 90);
    add(2, 0, 60);
    edges.push_back({1, 2, {}, {}});  // an edge type with no edges
  }
  std::vector<HeteroRelation> relations() const {
    std::vector<HeteroRelation> out;
    for (size_t r = 0; r < edges.size(); ++r) {
      const Edges& e = edges[r];
      out.push_back(HeteroRelation::from_coo("rel" + std::to_string(r), e.src_type, e.dst_type, e.src, e.dst,
                                             num_nodes[e.src_type], num_nodes[e.dst_type]));
    }
    return out;
  }
};

// Reference of a full-fanout sample, from the definition: per hop, per edge type, per
// frontier node of the destination type (in local order), its in-edges in input order.
HeteroSampledSubgraph reference_full(const Fixture& f, const std::vector<std::vector<int64_t>>& seeds, int64_t hops) {
  const size_t T = f.num_nodes.size(), R = f.edges.size();
  HeteroSampledSubgraph out;
  out.node = seeds;
  out.row.resize(R);
  out.col.resize(R);
  out.edge.resize(R);
  out.num_sampled_edges.resize(R);
  out.num_sampled_nodes.resize(T);
  std::vector<std::map<int64_t, int64_t>> local(T);
  for (size_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < seeds[t].size(); ++i) local[t][seeds[t][i]] = static_cast<int64_t>(i);
    out.num_sampled_nodes[t].push_back(static_cast<int64_t>(seeds[t].size()));
  }
  std::vector<size_t> begin(T, 0), end(T);
  for (size_t t = 0; t < T; ++t) end[t] = seeds[t].size();
  for (int64_t h = 0; h < hops; ++h) {
    for (size_t r = 0; r < R; ++r) {
      const Edges& e = f.edges[r];
      const size_t before = out.row[r].size();
      for (size_t i = begin[e.dst_type]; i < end[e.dst_type]; ++i) {
        const int64_t v = out.node[e.dst_type][i];
        for (size_t k = 0; k < e.src.size(); ++k) {
          if (e.dst[k] != v) continue;
          auto [it, inserted] = local[e.src_type].emplace(e.src[k], out.node[e.src_type].size());
          if (inserted) out.node[e.src_type].push_back(e.src[k]);
          out.row[r].push_back(it->second);
          out.col[r].push_back(static_cast<int64_t>(i));
          out.edge[r].push_back(static_cast<int64_t>(k));
        }
      }
      out.num_sampled_edges[r].push_back(static_cast<int64_t>(out.row[r].size() - before));
    }
    for (size_t t = 0; t < T; ++t) {
      begin[t] = end[t];
      end[t] = out.node[t].size();
      out.num_sampled_nodes[t].push_back(static_cast<int64_t>(end[t] - begin[t]));
    }
  }
  return out;
}

std::vector<std::span<const int64_t>> spans(const std::vector<std::vector<int64_t>>& v) {
  return {v.begin(), v.end()};
}

void expect_same(const HeteroSampledSubgraph& got, const HeteroSampledSubgraph& want) {
  EXPECT_EQ(got.node, want.node);
  EXPECT_EQ(got.row, want.row);
  EXPECT_EQ(got.col, want.col);
  EXPECT_EQ(got.edge, want.edge);
  EXPECT_EQ(got.num_sampled_nodes, want.num_sampled_nodes);
  EXPECT_EQ(got.num_sampled_edges, want.num_sampled_edges);
}

TEST(HeteroHopSampler, FullFanoutMatchesReference) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Fixture f(seed);
    for (int64_t hops : {1, 2, 3}) {
      std::vector<std::vector<int64_t>> counts(f.edges.size(), std::vector<int64_t>(static_cast<size_t>(hops), -1));
      HeteroHopSampler sampler(f.num_nodes, f.relations(), counts, false);
      const std::vector<std::vector<int64_t>> seeds{{3, 0, 17, 39}, {}, {}};
      HeteroHopSamplerScratch scratch;
      expect_same(sampler.sample(spans(seeds), 7, 0, scratch), reference_full(f, seeds, hops));
      // Seeds of two types at once, the scratch reused.
      const std::vector<std::vector<int64_t>> mixed{{5}, {2, 24}, {1}};
      expect_same(sampler.sample(spans(mixed), 7, 1, scratch), reference_full(f, mixed, hops));
    }
  }
}

TEST(HeteroHopSampler, FanoutAtLeastDegreeTakesAll) {
  const Fixture f(4);
  std::vector<std::vector<int64_t>> counts(f.edges.size(), std::vector<int64_t>{1000, 1000});
  HeteroHopSampler sampler(f.num_nodes, f.relations(), counts, false);
  const std::vector<std::vector<int64_t>> seeds{{1, 2, 3}, {}, {}};
  HeteroHopSamplerScratch scratch;
  expect_same(sampler.sample(spans(seeds), 3, 0, scratch), reference_full(f, seeds, 2));
}

// Every sampled edge exists with its endpoints; each destination gets min(count, degree)
// edges (exactly count with replacement), distinct without; nodes of a type distinct;
// a pure function of (seed, stream).
TEST(HeteroHopSampler, RandomSamplesAreValid) {
  const Fixture f(5);
  for (bool replace : {false, true}) {
    std::vector<std::vector<int64_t>> counts{{3, 2}, {2, 1}, {4, 0}, {1, 2}, {2, 2}};
    HeteroHopSampler sampler(f.num_nodes, f.relations(), counts, replace);
    const std::vector<std::vector<int64_t>> seeds{{0, 1, 2, 30}, {7}, {}};
    HeteroHopSamplerScratch scratch;
    const HeteroSampledSubgraph s = sampler.sample(spans(seeds), 11, 2, scratch);
    for (size_t t = 0; t < s.node.size(); ++t) {
      EXPECT_EQ(std::set<int64_t>(s.node[t].begin(), s.node[t].end()).size(), s.node[t].size());
      int64_t total = 0;
      for (int64_t c : s.num_sampled_nodes[t]) total += c;
      EXPECT_EQ(total, static_cast<int64_t>(s.node[t].size()));
    }
    for (size_t r = 0; r < f.edges.size(); ++r) {
      const Edges& e = f.edges[r];
      std::map<int64_t, std::vector<int64_t>> per_dst;
      for (size_t j = 0; j < s.row[r].size(); ++j) {
        const int64_t k = s.edge[r][j];
        ASSERT_GE(k, 0);
        ASSERT_LT(k, static_cast<int64_t>(e.src.size()));
        EXPECT_EQ(s.node[e.src_type][s.row[r][j]], e.src[k]);
        EXPECT_EQ(s.node[e.dst_type][s.col[r][j]], e.dst[k]);
        per_dst[s.col[r][j]].push_back(k);
      }
      int64_t first_hop = 0;
      for (size_t i = 0; i < seeds[e.dst_type].size(); ++i) {
        int64_t degree = 0;
        for (int64_t d : e.dst) degree += d == seeds[e.dst_type][i];
        const int64_t want = degree == 0 ? 0 : replace ? counts[r][0] : std::min(counts[r][0], degree);
        const auto& got = per_dst[static_cast<int64_t>(i)];
        EXPECT_EQ(static_cast<int64_t>(got.size()), want) << "relation " << r << " seed " << i;
        if (!replace) {
          EXPECT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size());
        }
        first_hop += want;
      }
      EXPECT_EQ(s.num_sampled_edges[r][0], first_hop) << "relation " << r;
    }
    HeteroHopSamplerScratch other;
    expect_same(sampler.sample(spans(seeds), 11, 2, other), s);
    const HeteroSampledSubgraph different = sampler.sample(spans(seeds), 12, 2, other);
    EXPECT_NE(different.edge, s.edge);
  }
}

// directed=false: the same nodes as the directed sample with the same draws, and per
// edge type every edge among them, destinations in local order, each one's in-edges in
// input order; the per-hop counts split them by the destinations' hop groups.
TEST(HeteroHopSampler, InducedHoldsEveryEdgeAmongTheSampledNodes) {
  const Fixture f(8);
  const std::vector<std::vector<int64_t>> counts{{2, 2}, {1, 2}, {2, 1}, {1, 1}, {2, 2}};
  HeteroHopSamplerOptions options;
  const HeteroHopSampler directed(f.num_nodes, f.relations(), counts, options);
  options.directed = false;
  const HeteroHopSampler induced(f.num_nodes, f.relations(), counts, options);
  const std::vector<std::vector<int64_t>> seeds{{0, 3, 30}, {7, 2}, {}};
  HeteroHopSamplerScratch scratch;
  const HeteroSampledSubgraph d = directed.sample(spans(seeds), 21, 4, scratch);
  const HeteroSampledSubgraph s = induced.sample(spans(seeds), 21, 4, scratch);
  EXPECT_EQ(s.node, d.node);
  EXPECT_EQ(s.num_sampled_nodes, d.num_sampled_nodes);
  for (size_t r = 0; r < f.edges.size(); ++r) {
    const Edges& e = f.edges[r];
    std::map<int64_t, int64_t> local_src;
    for (size_t i = 0; i < s.node[e.src_type].size(); ++i) local_src[s.node[e.src_type][i]] = static_cast<int64_t>(i);
    std::vector<int64_t> row, col, edge;
    for (size_t i = 0; i < s.node[e.dst_type].size(); ++i) {
      for (size_t k = 0; k < e.dst.size(); ++k) {
        if (e.dst[k] != s.node[e.dst_type][i] || !local_src.count(e.src[k])) continue;
        row.push_back(local_src[e.src[k]]);
        col.push_back(static_cast<int64_t>(i));
        edge.push_back(static_cast<int64_t>(k));
      }
    }
    EXPECT_EQ(s.row[r], row) << "relation " << r;
    EXPECT_EQ(s.col[r], col) << "relation " << r;
    EXPECT_EQ(s.edge[r], edge) << "relation " << r;
    // Every directed edge is among them.
    EXPECT_LE(d.edge[r].size(), s.edge[r].size());
    int64_t total = 0;
    for (int64_t c : s.num_sampled_edges[r]) total += c;
    EXPECT_EQ(total, static_cast<int64_t>(s.row[r].size()));
    ASSERT_EQ(s.num_sampled_edges[r].size(), 2u);
    const int64_t first_group = s.num_sampled_nodes[e.dst_type][0];
    EXPECT_EQ(s.num_sampled_edges[r][0],
              std::count_if(col.begin(), col.end(), [&](int64_t c) { return c < first_group; }));
  }
  HeteroHopSamplerOptions bad;
  bad.directed = false;
  bad.disjoint = true;
  expect_invalid([&] { HeteroHopSampler(f.num_nodes, f.relations(), counts, bad); },
                 "induced subgraphs (directed=False) of disjoint subgraphs are not supported");
}

TEST(HeteroHopSampler, IdsAreKept32BitAndSampleAsThe64BitOnes) {
  const Fixture f(9);
  const std::vector<HeteroRelation> narrow = f.relations();
  std::vector<HeteroRelation> wide = narrow;
  for (HeteroRelation& rel : wide) {
    ASSERT_EQ(rel.row32.size(), rel.edge_id32.size());
    ASSERT_TRUE(rel.row.empty() && rel.edge_id.empty());
    rel.row.assign(rel.row32.begin(), rel.row32.end());
    rel.edge_id.assign(rel.edge_id32.begin(), rel.edge_id32.end());
    std::vector<int32_t>().swap(rel.row32);
    std::vector<int32_t>().swap(rel.edge_id32);
    ASSERT_FALSE(rel.rows().narrow());
  }
  const std::vector<std::vector<int64_t>> counts{{3, 2}, {2, -1}, {4, 1}, {1, 2}, {2, 2}};
  const std::vector<std::vector<int64_t>> seeds{{0, 1, 2, 30}, {7}, {}};
  for (const bool induced : {false, true}) {
    HeteroHopSamplerOptions options;
    options.directed = !induced;
    const HeteroHopSampler a(f.num_nodes, narrow, counts, options), b(f.num_nodes, wide, counts, options);
    HeteroHopSamplerScratch sa, sb;
    const HeteroSampledSubgraph x = a.sample(spans(seeds), 13, 3, sa), y = b.sample(spans(seeds), 13, 3, sb);
    EXPECT_EQ(x.node, y.node);
    EXPECT_EQ(x.row, y.row);
    EXPECT_EQ(x.col, y.col);
    EXPECT_EQ(x.edge, y.edge);
    EXPECT_EQ(x.num_sampled_edges, y.num_sampled_edges);
  }
}

TEST(HeteroHopSampler, NoSeedsGivesAnEmptySample) {
  const Fixture f(6);
  std::vector<std::vector<int64_t>> counts(f.edges.size(), std::vector<int64_t>{5});
  HeteroHopSampler sampler(f.num_nodes, f.relations(), counts, false);
  HeteroHopSamplerScratch scratch;
  const auto s = sampler.sample(spans({{}, {}, {}}), 0, 0, scratch);
  for (const auto& n : s.node) EXPECT_TRUE(n.empty());
  for (const auto& c : s.num_sampled_nodes) EXPECT_EQ(c, (std::vector<int64_t>{0, 0}));
  for (const auto& c : s.num_sampled_edges) EXPECT_EQ(c, (std::vector<int64_t>{0}));
}

TEST(HeteroHopSampler, BadInputNamesTheField) {
  const Fixture f(7);
  const std::vector<int64_t> src{0, 5}, dst{1, 2};
  expect_invalid([&] { HeteroRelation::from_coo("cites", 0, 0, src, dst, 4, 4); }, "cites: edge_index[0][1] (5)");
  expect_invalid([&] { HeteroRelation::from_coo("cites", 0, 0, dst, src, 4, 4); }, "cites: edge_index[1][1] (5)");
  expect_invalid([&] { HeteroRelation::from_coo("cites", 0, 0, src, std::vector<int64_t>{1}, 9, 9); },
                     "differ in length");
  std::vector<std::vector<int64_t>> counts(f.edges.size(), std::vector<int64_t>{2});
  counts[3] = {2, 2};
  expect_invalid([&] { HeteroHopSampler(f.num_nodes, f.relations(), counts, false); }, "num_neighbors[3] names 2");
  counts[3] = {-2};
  expect_invalid([&] { HeteroHopSampler(f.num_nodes, f.relations(), counts, false); }, "num_neighbors[3][0] (-2)");
  counts[3] = {2};
  counts.pop_back();
  expect_invalid([&] { HeteroHopSampler(f.num_nodes, f.relations(), counts, false); }, "one list per edge type");
  counts.push_back({2});
  auto relations = f.relations();
  relations[1].dst_type = 3;
  expect_invalid([&] { HeteroHopSampler(f.num_nodes, relations, counts, false); }, "relation 1 joins");
  HeteroHopSampler sampler(f.num_nodes, f.relations(), counts, false);
  HeteroHopSamplerScratch scratch;
  expect_invalid([&] { sampler.sample(spans({{1, 40}, {}, {}}), 0, 0, scratch); }, "seeds[0][1] (40)");
  expect_invalid([&] { sampler.sample(spans({{1}, {3, 3}, {}}), 0, 0, scratch); }, "seeds[1][1] (3) repeats");
  expect_invalid([&] { sampler.sample(spans({{1}}), 0, 0, scratch); }, "one list per node type");
  // The scratch is still clean: a full sample afterwards matches the reference.
  std::vector<std::vector<int64_t>> all(f.edges.size(), std::vector<int64_t>{-1});
  HeteroHopSampler full(f.num_nodes, f.relations(), all, false);
  const std::vector<std::vector<int64_t>> seeds{{4}, {}, {}};
  expect_same(full.sample(spans(seeds), 0, 0, scratch), reference_full(f, seeds, 1));
}

TEST(HeteroHopSampler, DisjointSeedsOfTwoTypesGrowTheirOwnSubgraphs) {
  // author a -> paper p edges; paper p -> author a edges.
  const std::vector<int64_t> ap_src{0, 1, 1}, ap_dst{0, 0, 1}, pa_src{0, 1}, pa_dst{1, 0};
  std::vector<HeteroRelation> rels;
  rels.push_back(HeteroRelation::from_coo("writes", 1, 0, ap_src, ap_dst, 2, 2));
  rels.push_back(HeteroRelation::from_coo("written_by", 0, 1, pa_src, pa_dst, 2, 2));
  HeteroHopSamplerOptions options;
  options.disjoint = true;
  HeteroHopSampler sampler({2, 2}, std::move(rels), {{-1}, {-1}}, options);
  HeteroHopSamplerScratch scratch;
  // Seeds: papers 0, 0 (batches 0, 1), author 1 (batch 2).
  const auto s = sampler.sample(spans({{0, 0}, {1}}), 0, 0, scratch);
  // Paper 0 again, as batch 2's (reached from author 1): a node of its own.
  EXPECT_EQ(s.node[0], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(s.batch[0], (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(s.node[1], (std::vector<int64_t>{1, 0, 1, 0, 1}));  // the seed, then paper 0's authors, twice
  EXPECT_EQ(s.batch[1], (std::vector<int64_t>{2, 0, 0, 1, 1}));
  EXPECT_EQ(s.row[0], (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(s.col[0], (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(s.row[1], (std::vector<int64_t>{2}));
  EXPECT_EQ(s.col[1], (std::vector<int64_t>{0}));
}

TEST(HeteroHopSampler, TemporalFiltersByEachSeedsTime) {
  // author -> paper with node times on authors, edge times on paper -> paper.
  const std::vector<int64_t> src{0, 1, 2, 3}, dst{0, 0, 0, 0}, cite_src{1, 2}, cite_dst{0, 0}, cite_time{3, 8};
  std::vector<HeteroRelation> rels;
  rels.push_back(HeteroRelation::from_coo("writes", 1, 0, src, dst, 4, 3));
  rels.push_back(HeteroRelation::from_coo("cites", 0, 0, cite_src, cite_dst, 3, 3, {}, cite_time));
  HeteroHopSamplerOptions options;
  options.disjoint = true;
  options.node_time = {{5, 5, 5}, {9, 1, 4, 6}};
  HeteroHopSampler sampler({3, 4}, rels, {{-1}, {-1}}, options);
  HeteroHopSamplerScratch scratch;
  const std::vector<std::vector<int64_t>> times{{5, 8}, {}};
  const auto s = sampler.sample(spans({{0, 0}, {}}), spans(times), 0, 0, scratch);
  // Seed 0 (time 5): authors 1 (1), 2 (4); cites at 3. Seed 1 (time 8): authors 1, 2, 3; both cites.
  EXPECT_EQ(s.node[1], (std::vector<int64_t>{1, 2, 1, 2, 3}));
  EXPECT_EQ(s.batch[1], (std::vector<int64_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(s.node[0], (std::vector<int64_t>{0, 0, 1, 1, 2}));
  EXPECT_EQ(s.edge[1], (std::vector<int64_t>{0, 0, 1}));
  // Without seed_time the seeds take their node times (5, 5).
  const auto by_node = sampler.sample(spans({{0, 0}, {}}), 0, 0, scratch);
  EXPECT_EQ(by_node.node[1], (std::vector<int64_t>{1, 2, 1, 2}));
  // 'last' needs rows sorted by time; sort_rows_by_time makes them so (stably).
  options.temporal_strategy = TemporalStrategy::Last;
  expect_invalid([&] { HeteroHopSampler({3, 4}, rels, {{1}, {1}}, options); }, "relation 0: temporal_strategy 'last'");
  rels[0].sort_rows_by_time(options.node_time[1]);
  EXPECT_EQ(rels[0].row32, (std::vector<int32_t>{1, 2, 3, 0}));
  EXPECT_EQ(rels[0].edge_id32, (std::vector<int32_t>{1, 2, 3, 0}));
  EXPECT_TRUE(rels[0].row.empty() && rels[0].edge_id.empty());
  HeteroHopSampler last({3, 4}, rels, {{1}, {1}}, options);
  const auto newest = last.sample(spans({{0}, {}}), 0, 0, scratch);
  EXPECT_EQ(newest.node[1], (std::vector<int64_t>{2}));  // the newest author at or before 5
  options.disjoint = false;
  options.temporal_strategy = TemporalStrategy::Uniform;
  expect_invalid([&] { HeteroHopSampler({3, 4}, rels, {{1}, {1}}, options); }, "temporal sampling needs disjoint");
}

TEST(HeteroHopSampler, WeightsDecideTheDrawsAndBadOnesAreNamed) {
  const std::vector<int64_t> src{0, 1, 2}, dst{0, 0, 0};
  const std::vector<double> w{1.0, 3.0, 0.0};
  std::vector<HeteroRelation> rels{HeteroRelation::from_coo("writes", 1, 0, src, dst, 3, 1, w)};
  HeteroHopSamplerOptions options;
  options.disjoint = true;
  HeteroHopSampler sampler({1, 3}, rels, {{1}}, options);
  HeteroHopSamplerScratch scratch;
  const std::vector<int64_t> seeds(4000, 0);
  const auto s = sampler.sample({std::span<const int64_t>(seeds), {}}, 7, 0, scratch);
  int64_t heavy = 0;
  for (int64_t v : s.node[1]) {
    ASSERT_NE(v, 2);  // zero weight
    heavy += v == 1;
  }
  ASSERT_EQ(s.node[1].size(), 4000u);
  EXPECT_NEAR(static_cast<double>(heavy) / 4000.0, 0.75, 0.03);
  expect_invalid([&] { HeteroRelation::from_coo("writes", 1, 0, src, dst, 3, 1, std::vector<double>{1.0}); },
                 "writes: edge_weight must hold 3 entries");
  rels[0].edge_weight[1] = -1.0;
  expect_invalid([&] { HeteroHopSampler({1, 3}, rels, {{1}}, options); }, "relation 0: edge_weight[1] (-1)");
}

}  // namespace
}  // namespace edgewise::test
