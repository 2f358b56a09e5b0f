// HopSampler (pyg-lib's neighbor_sample semantics) and BatchPipeline: the full-fanout
// layout against an independent breadth-first reference, validity of random samples
// (edges exist, counts, no repeats), uniform and weighted proportions by chi-square,
// temporal eligibility, disjoint subgraphs, induced edges, determinism across thread
// counts, a failing batch surfacing in order, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "edgewise/gnn/sampling/batch_pipeline.hpp"
#include "edgewise/kernels/common/device.hpp"
#include "edgewise/gnn/sampling/csc_graph.hpp"
#include "edgewise/gnn/sampling/hop_sampler.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

struct Coo {
  std::vector<int64_t> src, dst;
  int64_t n = 0;
};

// A power-law-ish random multigraph with self-loops and a hub (node 0 receives from everyone).
Coo random_graph(int64_t n, int64_t e, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo g;
  g.n = n;
  for (int64_t k = 0; k < e; ++k) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    g.src.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(n)));
    g.dst.push_back(static_cast<int64_t>(std::pow(u, 3.0) * static_cast<double>(n)) % n);
  }
  for (int64_t v = 1; v < n; ++v) {
    g.src.push_back(v);
    g.dst.push_back(0);
  }
  return g;
}

std::shared_ptr<const CscGraph> csc_of(const Coo& g) {
  return std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n));
}

HopSamplerOptions hops(std::vector<int64_t> counts) {
  HopSamplerOptions o;
  o.num_neighbors = std::move(counts);
  return o;
}

// Breadth-first reference of a full-neighbourhood sample, written from PyG's
// definition: edges of each frontier node in input order (of the edge list), new
// sources numbered in the order met.
SampledSubgraph reference_full(const Coo& g, const std::vector<int64_t>& seeds, size_t num_hops) {
  std::vector<std::vector<int64_t>> in_edges(static_cast<size_t>(g.n));
  for (size_t k = 0; k < g.src.size(); ++k) in_edges[g.dst[k]].push_back(static_cast<int64_t>(k));
  SampledSubgraph out;
  std::map<int64_t, int64_t> local;
  for (int64_t s : seeds) {
    local[s] = static_cast<int64_t>(out.node.size());
    out.node.push_back(s);
  }
  out.num_sampled_nodes.push_back(static_cast<int64_t>(seeds.size()));
  size_t begin = 0, end = seeds.size();
  for (size_t h = 0; h < num_hops; ++h) {
    const size_t edges_before = out.row.size();
    for (size_t i = begin; i < end; ++i) {
      for (int64_t k : in_edges[out.node[i]]) {
        const int64_t u = g.src[k];
        if (!local.count(u)) {
          local[u] = static_cast<int64_t>(out.node.size());
          out.node.push_back(u);
        }
        out.row.push_back(local[u]);
        out.col.push_back(static_cast<int64_t>(i));
        out.edge.push_back(k);
      }
    }
    out.num_sampled_nodes.push_back(static_cast<int64_t>(out.node.size() - end));
    out.num_sampled_edges.push_back(static_cast<int64_t>(out.row.size() - edges_before));
    begin = end;
    end = out.node.size();
  }
  return out;
}

TEST(HopSampler, FullNeighbourhoodMatchesTheBreadthFirstReference) {
  const Coo g = random_graph(300, 2000, 1);
  const auto csc = csc_of(g);
  const std::vector<int64_t> seeds{5, 0, 299, 17};
  for (size_t num_hops : {1, 2, 3}) {
    HopSampler sampler(csc->view(), hops(std::vector<int64_t>(num_hops, -1)));
    HopSamplerScratch scratch;
    const SampledSubgraph got = sampler.sample(seeds, {}, 7, 0, scratch);
    const SampledSubgraph want = reference_full(g, seeds, num_hops);
    EXPECT_EQ(got.node, want.node) << num_hops;
    EXPECT_EQ(got.row, want.row) << num_hops;
    EXPECT_EQ(got.col, want.col) << num_hops;
    EXPECT_EQ(got.edge, want.edge) << num_hops;
    EXPECT_EQ(got.num_sampled_nodes, want.num_sampled_nodes) << num_hops;
    EXPECT_EQ(got.num_sampled_edges, want.num_sampled_edges) << num_hops;
    EXPECT_TRUE(got.batch.empty());
  }
}

// Every sampled edge is an edge of the graph, the counts per destination are right,
// and without replacement no CSC position repeats within a destination.
void expect_valid(const Coo& g, const SampledSubgraph& s, const HopSamplerOptions& o, size_t num_seeds) {
  std::vector<int64_t> in_degree(static_cast<size_t>(g.n), 0);
  for (int64_t d : g.dst) ++in_degree[d];
  ASSERT_EQ(s.row.size(), s.col.size());
  ASSERT_EQ(s.row.size(), s.edge.size());
  std::map<int64_t, std::vector<int64_t>> per_destination;
  for (size_t k = 0; k < s.row.size(); ++k) {
    const int64_t e = s.edge[k];
    ASSERT_GE(e, 0);
    ASSERT_LT(e, static_cast<int64_t>(g.src.size()));
    EXPECT_EQ(g.src[e], s.node[s.row[k]]);
    EXPECT_EQ(g.dst[e], s.node[s.col[k]]);
    per_destination[s.col[k]].push_back(e);
  }
  // The hop of each local node from num_sampled_nodes.
  std::vector<size_t> hop_of;
  for (size_t h = 0; h < s.num_sampled_nodes.size(); ++h) hop_of.insert(hop_of.end(), s.num_sampled_nodes[h], h);
  ASSERT_EQ(hop_of.size(), s.node.size());
  for (size_t i = 0; i < s.node.size(); ++i) {
    if (hop_of[i] >= o.num_neighbors.size()) continue;  // the last hop's nodes are not expanded
    const int64_t count = o.num_neighbors[hop_of[i]];
    const int64_t d = in_degree[s.node[i]];
    const auto& edges = per_destination[static_cast<int64_t>(i)];
    const int64_t want = count < 0 ? d : (o.replace ? (d > 0 ? count : 0) : std::min(count, d));
    EXPECT_EQ(static_cast<int64_t>(edges.size()), want) << "node " << s.node[i];
    if (!o.replace) {
      EXPECT_EQ(std::set<int64_t>(edges.begin(), edges.end()).size(), edges.size());
    }
  }
  if (!o.disjoint) {
    EXPECT_EQ(std::set<int64_t>(s.node.begin(), s.node.end()).size(), s.node.size());
  }
  EXPECT_EQ(s.num_sampled_nodes[0], static_cast<int64_t>(num_seeds));
  EXPECT_EQ(std::accumulate(s.num_sampled_edges.begin(), s.num_sampled_edges.end(), int64_t{0}),
            static_cast<int64_t>(s.row.size()));
}

TEST(HopSampler, RandomSamplesAreValidWithAndWithoutReplacement) {
  const Coo g = random_graph(500, 6000, 2);
  const auto csc = csc_of(g);
  for (bool replace : {false, true}) {
    for (bool disjoint : {false, true}) {
      HopSamplerOptions o = hops({7, 0, 3, -1});
      o.replace = replace;
      o.disjoint = disjoint;
      HopSampler sampler(csc->view(), o);
      HopSamplerScratch scratch;
      for (uint64_t stream = 0; stream < 5; ++stream) {
        const std::vector<int64_t> seeds{0, 3, 499, 250, 1};
        const SampledSubgraph s = sampler.sample(seeds, {}, 11, stream, scratch);
        expect_valid(g, s, o, seeds.size());
        if (disjoint) {
          ASSERT_EQ(s.batch.size(), s.node.size());
          for (size_t k = 0; k < s.row.size(); ++k) EXPECT_EQ(s.batch[s.row[k]], s.batch[s.col[k]]);
          // Within one seed's subgraph every node appears once.
          std::set<std::pair<int64_t, int64_t>> pairs;
          for (size_t i = 0; i < s.node.size(); ++i) pairs.insert({s.batch[i], s.node[i]});
          EXPECT_EQ(pairs.size(), s.node.size());
        }
      }
    }
  }
}

TEST(HopSampler, SameSeedAndStreamGiveTheSameSampleAndScratchIsReusable) {
  const Coo g = random_graph(400, 5000, 3);
  const auto csc = csc_of(g);
  HopSampler sampler(csc->view(), hops({5, 5}));
  HopSamplerScratch a, b;
  const std::vector<int64_t> seeds{1, 2, 3};
  const SampledSubgraph first = sampler.sample(seeds, {}, 42, 9, a);
  (void)sampler.sample({std::vector<int64_t>{7, 8}}, {}, 1, 1, a);  // scratch used in between
  const SampledSubgraph again = sampler.sample(seeds, {}, 42, 9, a);
  const SampledSubgraph other = sampler.sample(seeds, {}, 42, 9, b);
  EXPECT_EQ(first.node, again.node);
  EXPECT_EQ(first.edge, again.edge);
  EXPECT_EQ(first.edge, other.edge);
  const SampledSubgraph next_stream = sampler.sample(seeds, {}, 42, 10, a);
  EXPECT_NE(first.edge, next_stream.edge);
}

TEST(HopSampler, ACancelledCallThrowsAndLeavesTheScratchReusable) {
  const Coo g = random_graph(20000, 200000, 4);
  const auto csc = csc_of(g);
  HopSampler sampler(csc->view(), hops({-1, -1}));
  std::vector<int64_t> seeds(9000);
  std::iota(seeds.begin(), seeds.end(), int64_t{0});
  std::atomic<bool> cancel{true};
  HopSamplerScratch scratch, fresh;
  scratch.set_cancel_flag(&cancel);
  EXPECT_THROW((void)sampler.sample(seeds, {}, 42, 9, scratch), SamplingCancelled);
  cancel = false;
  const SampledSubgraph after = sampler.sample(seeds, {}, 42, 9, scratch);
  const SampledSubgraph want = sampler.sample(seeds, {}, 42, 9, fresh);
  EXPECT_EQ(after.node, want.node);
  EXPECT_EQ(after.row, want.row);
  EXPECT_EQ(after.edge, want.edge);
}

// Chi-square statistic of observed counts against expected probabilities.
double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (size_t i = 0; i < observed.size(); ++i) x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x;
}

// A star: node 0 receives from nodes 1..d, with weights 1..d.
Coo star(int64_t d) {
  Coo g;
  g.n = d + 1;
  for (int64_t v = 1; v <= d; ++v) {
    g.src.push_back(v);
    g.dst.push_back(0);
  }
  return g;
}

TEST(HopSampler, UniformDrawsAreUniformByChiSquare) {
  const int64_t d = 10, k = 3, trials = 20000;
  const Coo g = star(d);
  const auto csc = csc_of(g);
  for (bool replace : {false, true}) {
    HopSamplerOptions o = hops({k});
    o.replace = replace;
    HopSampler sampler(csc->view(), o);
    HopSamplerScratch scratch;
    std::vector<double> counts(static_cast<size_t>(d), 0);
    for (int64_t t = 0; t < trials; ++t) {
      const SampledSubgraph s = sampler.sample({std::vector<int64_t>{0}}, {}, 5, static_cast<uint64_t>(t), scratch);
      for (int64_t e : s.edge) counts[e] += 1;
    }
    const std::vector<double> expected(static_cast<size_t>(d), static_cast<double>(trials * k) / d);
    // 9 degrees of freedom: P(chi2 > 27.9) = 0.001.
    EXPECT_LT(chi_square(counts, expected), 27.9) << "replace=" << replace;
  }
}

TEST(HopSampler, WeightedDrawsFollowTheWeightsByChiSquare) {
  const int64_t d = 6, trials = 30000;
  const Coo g = star(d);
  std::vector<double> w{1, 2, 3, 0, 4, 5};  // position 3 never drawn
  const auto csc = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, w));
  const double total = 15;
  for (bool replace : {false, true}) {
    // Without replacement a single draw is proportional; with replacement every draw is.
    const int64_t k = replace ? 4 : 1;
    HopSamplerOptions o = hops({k});
    o.replace = replace;
    HopSampler sampler(csc->view(), o);
    HopSamplerScratch scratch;
    std::vector<double> counts(static_cast<size_t>(d), 0);
    for (int64_t t = 0; t < trials; ++t) {
      const SampledSubgraph s = sampler.sample({std::vector<int64_t>{0}}, {}, 8, static_cast<uint64_t>(t), scratch);
      ASSERT_EQ(static_cast<int64_t>(s.edge.size()), k);
      for (int64_t e : s.edge) counts[e] += 1;
    }
    EXPECT_EQ(counts[3], 0) << "a zero weight was drawn";
    std::vector<double> observed, expected;
    for (int64_t j = 0; j < d; ++j) {
      if (w[j] == 0) continue;
      observed.push_back(counts[j]);
      expected.push_back(static_cast<double>(trials * k) * w[j] / total);
    }
    // 4 degrees of freedom: P(chi2 > 18.5) = 0.001.
    EXPECT_LT(chi_square(observed, expected), 18.5) << "replace=" << replace;
  }
  // Without replacement and more draws than positive weights: every positive one, once.
  HopSampler all(csc->view(), hops({6}));
  HopSamplerScratch scratch;
  const SampledSubgraph s = all.sample({std::vector<int64_t>{0}}, {}, 1, 0, scratch);
  EXPECT_EQ(s.edge, (std::vector<int64_t>{0, 1, 2, 4, 5}));
}

TEST(HopSampler, TemporalSamplesOnlyEligibleNeighbours) {
  // Node 0 receives from 1..8; node v has time v; seed 0 at time 5 sees 1..5.
  const Coo g = star(8);
  std::vector<int64_t> node_time{0, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto csc = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, {}, {}, node_time, true));
  for (auto strategy : {TemporalStrategy::Uniform, TemporalStrategy::Last}) {
    HopSamplerOptions o = hops({3});
    o.disjoint = true;
    o.temporal_strategy = strategy;
    HopSampler sampler(csc->view(), o);
    HopSamplerScratch scratch;
    for (uint64_t t = 0; t < 50; ++t) {
      const std::vector<int64_t> seed_time{5};
      const SampledSubgraph s = sampler.sample({std::vector<int64_t>{0}}, seed_time, 3, t, scratch);
      ASSERT_EQ(s.edge.size(), 3u);
      for (int64_t e : s.edge) EXPECT_LE(node_time[g.src[e]], 5);
      if (strategy == TemporalStrategy::Last) {
        std::vector<int64_t> sources;
        for (int64_t e : s.edge) sources.push_back(g.src[e]);
        EXPECT_EQ(sources, (std::vector<int64_t>{3, 4, 5}));
      }
    }
  }
  // By edge time: edge k has time 10 - k; seed time 4 admits edges with time <= 4.
  std::vector<int64_t> edge_time;
  for (int64_t k = 0; k < 8; ++k) edge_time.push_back(10 - k);
  const auto by_edge = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, {}, edge_time, {}, true));
  HopSamplerOptions o = hops({-1});
  o.disjoint = true;
  HopSampler sampler(by_edge->view(), o);
  HopSamplerScratch scratch;
  const std::vector<int64_t> seed_time{4};
  const SampledSubgraph s = sampler.sample({std::vector<int64_t>{0}}, seed_time, 3, 0, scratch);
  std::set<int64_t> edges(s.edge.begin(), s.edge.end());
  EXPECT_EQ(edges, (std::set<int64_t>{6, 7}));
}

TEST(HopSampler, InducedSubgraphHoldsEveryEdgeAmongTheSampledNodes) {
  const Coo g = random_graph(200, 3000, 4);
  const auto csc = csc_of(g);
  HopSamplerOptions o = hops({4, 2});
  o.directed = false;
  HopSampler sampler(csc->view(), o);
  HopSamplerScratch scratch;
  const SampledSubgraph s = sampler.sample({std::vector<int64_t>{3, 9}}, {}, 2, 0, scratch);
  std::map<int64_t, int64_t> local;
  for (size_t i = 0; i < s.node.size(); ++i) local[s.node[i]] = static_cast<int64_t>(i);
  std::multiset<int64_t> want;
  for (size_t k = 0; k < g.src.size(); ++k) {
    if (local.count(g.src[k]) && local.count(g.dst[k])) want.insert(static_cast<int64_t>(k));
  }
  EXPECT_EQ(std::multiset<int64_t>(s.edge.begin(), s.edge.end()), want);
  for (size_t k = 0; k < s.edge.size(); ++k) {
    EXPECT_EQ(s.node[s.row[k]], g.src[s.edge[k]]);
    EXPECT_EQ(s.node[s.col[k]], g.dst[s.edge[k]]);
  }
  EXPECT_EQ(std::accumulate(s.num_sampled_edges.begin(), s.num_sampled_edges.end(), int64_t{0}),
            static_cast<int64_t>(s.edge.size()));
}

TEST(HopSampler, EdgeCases) {
  const Coo g = random_graph(50, 300, 5);
  const auto csc = csc_of(g);
  HopSampler sampler(csc->view(), hops({3, 3}));
  HopSamplerScratch scratch;
  const SampledSubgraph none = sampler.sample({}, {}, 0, 0, scratch);
  EXPECT_TRUE(none.node.empty());
  EXPECT_EQ(none.num_sampled_nodes, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(none.num_sampled_edges, (std::vector<int64_t>{0, 0}));
  // A graph without edges: the seeds alone.
  const auto empty = std::make_shared<const CscGraph>(CscGraph::from_coo({}, {}, 4));
  HopSampler lonely(empty->view(), hops({-1, 5}));
  const SampledSubgraph s = lonely.sample({std::vector<int64_t>{2, 1}}, {}, 0, 0, scratch);
  EXPECT_EQ(s.node, (std::vector<int64_t>{2, 1}));
  EXPECT_TRUE(s.row.empty());
}

TEST(HopSampler, BadInputIsRefusedNamingTheArgument) {
  const Coo g = random_graph(20, 60, 6);
  const auto csc = csc_of(g);
  expect_invalid([&] { HopSampler(csc->view(), hops({})); }, "num_neighbors");
  expect_invalid([&] { HopSampler(csc->view(), hops({2, -2})); }, "num_neighbors[1]");
  expect_invalid([&] { HopSampler(csc->view(), hops(std::vector<int64_t>(65, 1))); }, "num_neighbors");
  std::vector<int64_t> colptr = csc->colptr, row(csc->row32.begin(), csc->row32.end());
  row[3] = 20;
  expect_invalid([&] { HopSampler(CscView{colptr, row, {}, {}, {}, {}}, hops({1})); }, "row[3]");
  std::vector<int32_t> row32 = csc->row32;
  row32[3] = -1;
  expect_invalid([&] { HopSampler(CscView{colptr, row32, {}, {}, {}, {}}, hops({1})); }, "row[3]");
  row.assign(csc->row32.begin(), csc->row32.end());
  std::swap(colptr[4], colptr[5]);
  if (colptr[4] != colptr[5]) expect_invalid([&] { HopSampler(CscView{colptr, row, {}, {}, {}, {}}, hops({1})); }, "colptr");
  std::vector<double> w(g.src.size(), 1.0);
  w[7] = -1;
  const auto negative = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, w));
  expect_invalid([&] { HopSampler(negative->view(), hops({1})); }, "edge_weight[");
  w[7] = std::nan("");
  const auto nan = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, w));
  expect_invalid([&] { HopSampler(nan->view(), hops({1})); }, "edge_weight[");
  std::vector<int64_t> bad_src = g.src;
  bad_src[2] = -1;
  expect_invalid([&] { (void)CscGraph::from_coo(bad_src, g.dst, g.n); }, "edge_index[0][2]");
  std::vector<int64_t> times(static_cast<size_t>(g.n), 0);
  const auto timed = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, {}, {}, times));
  expect_invalid([&] { HopSampler(timed->view(), hops({1})); }, "disjoint");
  // 'last' on rows not sorted by time.
  std::vector<int64_t> node_time(static_cast<size_t>(g.n));
  std::iota(node_time.rbegin(), node_time.rend(), 0);
  const auto unsorted = std::make_shared<const CscGraph>(CscGraph::from_coo(g.src, g.dst, g.n, {}, {}, node_time));
  HopSamplerOptions last = hops({1});
  last.disjoint = true;
  last.temporal_strategy = TemporalStrategy::Last;
  expect_invalid([&] { HopSampler(unsorted->view(), last); }, "sorted");
  HopSampler sampler(csc->view(), hops({2}));
  HopSamplerScratch scratch;
  expect_invalid([&] { sampler.sample({std::vector<int64_t>{1, 20}}, {}, 0, 0, scratch); }, "seeds[1] (20)");
  expect_invalid([&] { sampler.sample({std::vector<int64_t>{1, 4, 1}}, {}, 0, 0, scratch); }, "repeats");
  expect_invalid([&] { (void)parse_temporal_strategy("newest"); }, "temporal_strategy");
}

// --- BatchPipeline ---------------------------------------------------------------

struct Features {
  std::vector<float> x;  // [N, 3]: row v is (v, v + 0.5, -v)
  explicit Features(int64_t n) {
    for (int64_t v = 0; v < n; ++v) x.insert(x.end(), {float(v), float(v) + 0.5f, -float(v)});
  }
  RowTable table(int64_t n) const { return {reinterpret_cast<const std::byte*>(x.data()), n, 3 * sizeof(float)}; }
};

// Every batch of the epoch in progress, in order.
std::vector<SampledBatch> drain(BatchPipeline& p) {
  std::vector<SampledBatch> out;
  SampledBatch b;
  for (;;) {
    const auto got = p.next(b, std::chrono::milliseconds(1000));
    if (got == BatchPipeline::Next::End) break;
    if (got == BatchPipeline::Next::Batch) out.push_back(std::move(b));
  }
  return out;
}

std::vector<SampledBatch> run_epoch(BatchPipeline& p, uint64_t epoch) {
  p.start_epoch(epoch);
  return drain(p);
}

TEST(BatchPipeline, EpochCoversTheInputsInOrderAndGathersRows) {
  const Coo g = random_graph(300, 3000, 7);
  const auto csc = csc_of(g);
  const Features f(g.n);
  std::vector<int64_t> inputs(100);
  std::iota(inputs.begin(), inputs.end(), 100);
  for (bool shuffle : {false, true}) {
    BatchPipelineOptions o;
    o.batch_size = 16;
    o.shuffle = shuffle;
    o.num_threads = 2;
    o.queue_depth = 2;
    BatchPipeline p(csc, hops({5, 3}), inputs, {}, {f.table(g.n)}, {}, o);
    EXPECT_EQ(p.num_batches(), 7);
    const auto batches = run_epoch(p, 0);
    ASSERT_EQ(batches.size(), 7u);
    std::vector<int64_t> seen;
    for (size_t b = 0; b < batches.size(); ++b) {
      const SampledBatch& batch = batches[b];
      EXPECT_EQ(batch.index, static_cast<int64_t>(b));
      for (size_t i = 0; i < batch.input_id.size(); ++i) {
        seen.push_back(batch.input_id[i]);
        EXPECT_EQ(batch.subgraph.node[i], inputs[batch.input_id[i]]);
      }
      ASSERT_EQ(batch.node_rows.size(), 1u);
      const float* rows = reinterpret_cast<const float*>(batch.node_rows[0]->data);
      ASSERT_EQ(batch.node_rows[0]->bytes, static_cast<int64_t>(batch.subgraph.node.size() * 3 * sizeof(float)));
      for (size_t i = 0; i < batch.subgraph.node.size(); ++i) {
        EXPECT_EQ(rows[3 * i + 1], float(batch.subgraph.node[i]) + 0.5f);
      }
    }
    std::vector<int64_t> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(100);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all);
    EXPECT_EQ(std::is_sorted(seen.begin(), seen.end()), !shuffle);
  }
}

TEST(BatchPipeline, BatchesAreTheSameAtAnyThreadCountAndDifferPerEpoch) {
  const Coo g = random_graph(500, 8000, 8);
  const auto csc = csc_of(g);
  std::vector<int64_t> inputs(200);
  std::iota(inputs.begin(), inputs.end(), 0);
  std::vector<std::vector<SampledBatch>> runs;
  for (int threads : {1, 2, 3}) {
    BatchPipelineOptions o;
    o.batch_size = 32;
    o.shuffle = true;
    o.seed = 77;
    o.num_threads = threads;
    o.queue_depth = 1;
    BatchPipeline p(csc, hops({6, 4}), inputs, {}, {}, {}, o);
    runs.push_back(run_epoch(p, 3));
    if (threads == 1) {
      const auto other_epoch = run_epoch(p, 4);
      EXPECT_NE(other_epoch[0].input_id, runs[0][0].input_id);
    }
  }
  for (size_t r = 1; r < runs.size(); ++r) {
    ASSERT_EQ(runs[r].size(), runs[0].size());
    for (size_t b = 0; b < runs[0].size(); ++b) {
      EXPECT_EQ(runs[r][b].input_id, runs[0][b].input_id);
      EXPECT_EQ(runs[r][b].subgraph.node, runs[0][b].subgraph.node);
      EXPECT_EQ(runs[r][b].subgraph.edge, runs[0][b].subgraph.edge);
    }
  }
}

TEST(BatchPipeline, WithoutOverlapNothingIsSampledUntilTheConsumerWaits) {
  const Coo g = random_graph(400, 6000, 10);
  const auto csc = csc_of(g);
  std::vector<int64_t> inputs(120);
  std::iota(inputs.begin(), inputs.end(), 0);
  std::vector<std::vector<SampledBatch>> runs;
  for (bool overlap : {true, false}) {
    Features f(g.n);
    BatchPipelineOptions o;
    o.batch_size = 16;
    o.shuffle = true;
    o.seed = 5;
    o.num_threads = 2;
    o.overlap = overlap;
    BatchPipeline p(csc, hops({5, 3}), inputs, {}, {f.table(g.n)}, {}, o);
    std::vector<SampledBatch> batches;
    if (overlap) {
      batches = run_epoch(p, 2);
    } else {
      // The threads stay idle until next() waits, however long the consumer is away: a
      // table changed meanwhile is what every batch gathers.
      p.start_epoch(2);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (float& v : f.x) v += 1000.0f;
      SampledBatch b;
      for (;;) {
        const auto got = p.next(b, std::chrono::milliseconds(1000));
        if (got == BatchPipeline::Next::End) break;
        if (got == BatchPipeline::Next::Batch) batches.push_back(std::move(b));
      }
      for (const SampledBatch& batch : batches) {
        const float* rows = reinterpret_cast<const float*>(batch.node_rows[0]->data);
        for (size_t i = 0; i < batch.subgraph.node.size(); ++i) {
          ASSERT_EQ(rows[3 * i], float(batch.subgraph.node[i]) + 1000.0f) << "batch " << batch.index;
        }
      }
    }
    runs.push_back(std::move(batches));
  }
  ASSERT_EQ(runs[0].size(), 8u);
  ASSERT_EQ(runs[1].size(), runs[0].size());
  for (size_t b = 0; b < runs[0].size(); ++b) {
    EXPECT_EQ(runs[1][b].index, static_cast<int64_t>(b));
    EXPECT_EQ(runs[1][b].input_id, runs[0][b].input_id);
    EXPECT_EQ(runs[1][b].subgraph.node, runs[0][b].subgraph.node);
    EXPECT_EQ(runs[1][b].subgraph.edge, runs[0][b].subgraph.edge);
  }
}

TEST(BatchPipeline, DropLastAndAFailingBatchSurfacesInItsTurn) {
  const Coo g = random_graph(60, 300, 9);
  const auto csc = csc_of(g);
  BatchPipelineOptions o;
  o.batch_size = 2;
  o.drop_last = true;
  o.num_threads = 2;
  // A repeated seed inside batch 1 makes that batch fail; batch 0 arrives first.
  BatchPipeline p(csc, hops({2}), {0, 1, 2, 2, 5}, {}, {}, {}, o);
  EXPECT_EQ(p.num_batches(), 2);
  p.start_epoch(0);
  SampledBatch b;
  BatchPipeline::Next got;
  do got = p.next(b, std::chrono::milliseconds(1000)); while (got == BatchPipeline::Next::Timeout);
  ASSERT_EQ(got, BatchPipeline::Next::Batch);
  EXPECT_EQ(b.index, 0);
  EXPECT_THROW(
      {
        do got = p.next(b, std::chrono::milliseconds(1000)); while (got == BatchPipeline::Next::Timeout);
      },
      std::invalid_argument);
  EXPECT_EQ(p.next(b, std::chrono::milliseconds(10)), BatchPipeline::Next::End);
}

TEST(BatchPipeline, StoppingMidEpochEndsTheThreads) {
  const Coo g = random_graph(2000, 40000, 10);
  const auto csc = csc_of(g);
  std::vector<int64_t> inputs(2000);
  std::iota(inputs.begin(), inputs.end(), 0);
  BatchPipelineOptions o;
  o.batch_size = 8;
  o.num_threads = 2;
  auto p = std::make_unique<BatchPipeline>(csc, hops({10, 10}), inputs, std::vector<int64_t>{},
                                           std::vector<RowTable>{}, std::vector<RowTable>{}, o);
  p->start_epoch(0);
  SampledBatch b;
  while (p->next(b, std::chrono::milliseconds(1000)) == BatchPipeline::Next::Timeout) {
  }
  p.reset();  // joins the threads; a hang here fails the test by timeout
  SUCCEED();
}

TEST(BatchPipeline, BatchesOutliveTheirPipelineAndBuffersAreReused) {
  const Coo g = random_graph(200, 2000, 12);
  const auto csc = csc_of(g);
  const Features f(g.n);
  std::vector<int64_t> inputs(64);
  std::iota(inputs.begin(), inputs.end(), 0);
  BatchPipelineOptions o;
  o.batch_size = 8;
  o.queue_depth = 1;
  std::vector<SampledBatch> kept;
  {
    BatchPipeline p(csc, hops({3, 3}), inputs, {}, {f.table(g.n)}, {}, o);
    std::set<const std::byte*> blocks;
    for (int epoch = 0; epoch < 3; ++epoch) {
      p.start_epoch(static_cast<uint64_t>(epoch));
      SampledBatch b;
      for (;;) {  // each batch dropped when the next arrives
        const auto got = p.next(b, std::chrono::milliseconds(1000));
        if (got == BatchPipeline::Next::End) break;
        if (got == BatchPipeline::Next::Batch) blocks.insert(b.node_rows[0]->data);
      }
    }
    // 24 batches: the pool's few blocks serve them all.
    EXPECT_LE(blocks.size(), 6u);
    kept = run_epoch(p, 7);
  }
  for (const SampledBatch& b : kept) {  // the pipeline is gone; its rows are still readable
    const float* rows = reinterpret_cast<const float*>(b.node_rows[0]->data);
    for (size_t i = 0; i < b.subgraph.node.size(); ++i) EXPECT_EQ(rows[3 * i], float(b.subgraph.node[i]));
  }
}

// pin_memory: rows land in page-locked blocks where a CUDA device exists, in pageable
// ones elsewhere; either way the same rows, and the blocks go back to the pool.
TEST(BatchPipeline, PinMemoryGathersIntoPageLockedBlocksWhereADeviceExists) {
  const Coo g = random_graph(200, 2000, 13);
  const auto csc = csc_of(g);
  const Features f(g.n);
  const Features ef(static_cast<int64_t>(g.src.size()));
  std::vector<int64_t> inputs(64);
  std::iota(inputs.begin(), inputs.end(), 0);
  const bool device = cuda_device_count() > 0;
  BatchPipelineOptions o;
  o.batch_size = 8;
  o.queue_depth = 1;
  o.pin_memory = true;
  BatchPipeline p(csc, hops({3, 3}), inputs, {}, {f.table(g.n)}, {ef.table(static_cast<int64_t>(g.src.size()))}, o);
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (const SampledBatch& b : run_epoch(p, static_cast<uint64_t>(epoch))) {
      ASSERT_EQ(b.node_rows.size(), 1u);
      ASSERT_EQ(b.edge_rows.size(), 1u);
      EXPECT_EQ(b.node_rows[0]->pinned, device);
      EXPECT_EQ(b.edge_rows[0]->pinned, device);
      const float* rows = reinterpret_cast<const float*>(b.node_rows[0]->data);
      for (size_t i = 0; i < b.subgraph.node.size(); ++i) EXPECT_EQ(rows[3 * i], float(b.subgraph.node[i]));
      const float* edge_rows = reinterpret_cast<const float*>(b.edge_rows[0]->data);
      for (size_t i = 0; i < b.subgraph.edge.size(); ++i) {
        EXPECT_EQ(edge_rows[3 * i + 1], float(b.subgraph.edge[i]) + 0.5f);
      }
    }
  }
}

TEST(BatchPipeline, GivenSeedBatchesAreSampledAsGivenAndTheNextPlainEpochCutsTheInputsAgain) {
  const Coo g = random_graph(200, 2500, 13);
  const auto csc = csc_of(g);
  const Features f(g.n);
  BatchPipelineOptions o;
  o.batch_size = 8;
  o.num_threads = 2;
  o.seed = 5;
  std::vector<int64_t> inputs(20);
  std::iota(inputs.begin(), inputs.end(), 0);
  BatchPipeline p(csc, hops({4, 2}), inputs, {}, {f.table(g.n)}, {}, o);
  SeedBatches given{{7, 3, 150, 9, 12, 199, 0}, {0, 3, 3, 7}, {}};  // an empty batch in the middle
  p.start_epoch(2, given);
  EXPECT_EQ(p.num_batches(), 3);
  const std::vector<SampledBatch> batches = drain(p);
  ASSERT_EQ(batches.size(), 3u);
  HopSampler direct(csc->view(), hops({4, 2}));
  HopSamplerScratch scratch;
  for (int64_t k = 0; k < 3; ++k) {
    const std::vector<int64_t> seeds(given.seeds.begin() + given.offsets[k], given.seeds.begin() + given.offsets[k + 1]);
    std::vector<int64_t> positions(seeds.size());
    std::iota(positions.begin(), positions.end(), given.offsets[k]);
    EXPECT_EQ(batches[k].input_id, positions);
    // The same draws as the sampler called directly with the batch's stream.
    const SampledSubgraph expected = direct.sample(seeds, {}, o.seed, (uint64_t{2} << 32) | uint64_t(k), scratch);
    EXPECT_EQ(batches[k].subgraph.node, expected.node);
    EXPECT_EQ(batches[k].subgraph.edge, expected.edge);
    const float* rows = reinterpret_cast<const float*>(batches[k].node_rows[0]->data);
    for (size_t i = 0; i < expected.node.size(); ++i) EXPECT_EQ(rows[3 * i], float(expected.node[i]));
  }
  EXPECT_EQ(run_epoch(p, 3).size(), 3u);  // 20 inputs in batches of 8 again
  EXPECT_EQ(p.num_batches(), 3);
  // Bad batches are refused before the epoch in progress is touched.
  expect_invalid([&] { p.start_epoch(0, SeedBatches{{1, 2}, {0, 1}, {}}); }, "offsets must run from 0");
  expect_invalid([&] { p.start_epoch(0, SeedBatches{{1, 2}, {0, 2, 1, 2}, {}}); }, "offsets must not decrease");
  expect_invalid([&] { p.start_epoch(0, SeedBatches{{1, 200}, {0, 2}, {}}); }, "seeds[1] (200)");
  expect_invalid([&] { p.start_epoch(0, SeedBatches{{1, 2}, {0, 2}, {5, 6}}); }, "seed_time needs");
  expect_invalid([&] { p.start_epoch(0, SeedBatches{{1, 2}, {0, 2}, {5}}); }, "seed_time must hold 2");
}

TEST(BatchPipeline, BadArgumentsAreRefusedBeforeAnyThreadStarts) {
  const Coo g = random_graph(30, 100, 11);
  const auto csc = csc_of(g);
  BatchPipelineOptions o;
  expect_invalid([&] { BatchPipeline(csc, hops({2}), {0, 30}, {}, {}, {}, o); }, "input_nodes[1] (30)");
  const Features f(10);
  expect_invalid([&] { BatchPipeline(csc, hops({2}), {0}, {}, {f.table(10)}, {}, o); }, "node table 0");
  expect_invalid([&] { BatchPipeline(csc, hops({2}), {0}, {5}, {}, {}, o); }, "input_time");
  // An edge table needs a row per edge id: the graph's (32-bit here), or per CSC
  // position where it has none.
  const int64_t E = csc->view().num_edges();
  const Features short_edges(E - 1);
  expect_invalid([&] { BatchPipeline(csc, hops({2}), {0}, {}, {}, {short_edges.table(E - 1)}, o); }, "edge table 0");
  auto positions = std::make_shared<CscGraph>();
  positions->colptr = csc->colptr;
  positions->row32 = csc->row32;
  expect_invalid([&] { BatchPipeline(positions, hops({2}), {0}, {}, {}, {short_edges.table(E - 1)}, o); },
                 "edge table 0");
  o.batch_size = 0;
  expect_invalid([&] { BatchPipeline(csc, hops({2}), {0}, {}, {}, {}, o); }, "batch_size");
}

TEST(CscGraph, IdsAreKept32BitWhereTheyFitAndSampleAsThe64BitOnes) {
  const Coo g = random_graph(500, 6000, 12);
  std::vector<double> w(g.src.size());
  std::vector<int64_t> edge_time(g.src.size());
  for (size_t k = 0; k < w.size(); ++k) {
    w[k] = static_cast<double>(k % 7);
    edge_time[k] = static_cast<int64_t>((k * 7919) % 1000);
  }
  for (const bool weighted : {false, true}) {
    const std::span<const double> weights = weighted ? std::span<const double>(w) : std::span<const double>();
    const CscGraph narrow = CscGraph::from_coo(g.src, g.dst, g.n, weights, edge_time, {}, true);
    const CscGraph wide = CscGraph::from_coo(g.src, g.dst, g.n, weights, edge_time, {}, true, /*wide_ids=*/true);
    ASSERT_TRUE(narrow.row.empty() && narrow.edge_id.empty());
    ASSERT_EQ(narrow.row32.size(), g.src.size());
    ASSERT_TRUE(narrow.view().row.narrow() && narrow.view().edge_id.narrow());
    ASSERT_TRUE(wide.row32.empty() && !wide.view().row.narrow());
    for (size_t k = 0; k < g.src.size(); ++k) {
      ASSERT_EQ(narrow.view().row[k], wide.row[k]);
      ASSERT_EQ(narrow.view().edge_id[k], wide.edge_id[k]);
    }
    const std::vector<int64_t> seeds{0, 3, 17, 250, 499};
    const std::vector<int64_t> seed_time{900, 500, 999, 100, 700};
    for (const int mode : {0, 1, 2, 3}) {  // plain, with replacement, induced, disjoint + temporal
      HopSamplerOptions o = hops({4, 3});
      o.replace = mode == 1;
      o.directed = mode != 2;
      o.disjoint = mode == 3;
      HopSamplerScratch a, b;
      const bool temporal = mode == 3;
      const CscGraph narrow_plain = CscGraph::from_coo(g.src, g.dst, g.n, weights);
      const CscGraph wide_plain = CscGraph::from_coo(g.src, g.dst, g.n, weights, {}, {}, false, true);
      const HopSampler s32(temporal ? narrow.view() : narrow_plain.view(), o);
      const HopSampler s64(temporal ? wide.view() : wide_plain.view(), o);
      const std::span<const int64_t> times = temporal ? std::span<const int64_t>(seed_time) : std::span<const int64_t>();
      const SampledSubgraph x = s32.sample(seeds, times, 5, 2, a);
      const SampledSubgraph y = s64.sample(seeds, times, 5, 2, b);
      EXPECT_EQ(x.node, y.node) << "mode " << mode;
      EXPECT_EQ(x.row, y.row) << "mode " << mode;
      EXPECT_EQ(x.col, y.col) << "mode " << mode;
      EXPECT_EQ(x.edge, y.edge) << "mode " << mode;
      EXPECT_FALSE(x.edge.empty());
    }
  }
}

TEST(CscGraph, NarrowIdsMovesFittingArraysTo32Bits) {
  CscGraph g;
  g.colptr = {0, 1, 3};
  g.row = {1, 0, 1};
  g.edge_id = {2, 0, 1};
  g.narrow_ids();
  EXPECT_TRUE(g.row.empty() && g.edge_id.empty());
  EXPECT_EQ(g.row32, (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(g.edge_id32, (std::vector<int32_t>{2, 0, 1}));
  CscGraph big;
  big.colptr = {0, 1};
  big.row = {int64_t{1} << 40};  // no 32-bit form: kept, and the sampler's check names it
  big.narrow_ids();
  EXPECT_TRUE(big.row32.empty());
  EXPECT_EQ(big.row, (std::vector<int64_t>{int64_t{1} << 40}));
  expect_invalid([&] { HopSampler(big.view(), hops({1})); }, "row[0]");
}

}  // namespace
}  // namespace edgewise::test
