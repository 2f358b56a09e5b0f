// Samplers: NeighborSampler blocks against the graph (validity, counts, relabelling,
// full fan-out = in-edges, uniformity, determinism across threads), SeedSampler
// frequencies and priority updates, LayerwiseSampler (FastGCN / LADIES) estimator,
// Graph::from_csr, and bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/sampling/layerwise_sampler.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

// Runs a scope with one OpenMP thread. The statistical and training loops below make
// thousands of calls on tiny inputs, where each parallel region costs a thread
// wake-up — on a shared 2-core runner, a scheduler time slice. Their results do not
// depend on the thread count (SameGeneratorStateGivesTheSameBatchAtAnyThreadCount and
// the kernels' own tests check that), so they run serially to keep the suite fast.
class SerialOpenMP {
 public:
  SerialOpenMP() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SerialOpenMP() { omp_set_num_threads(previous_); }
  SerialOpenMP(const SerialOpenMP&) = delete;
  SerialOpenMP& operator=(const SerialOpenMP&) = delete;

 private:
  int previous_;
};

// A simple directed graph (no duplicate edges, no self loops) in shuffled input order,
// so its CSR rows are not sorted by source: node 0 is a hub (in-degree ~ n/2), the
// last few nodes are isolated, the rest have random in-degree 0..12.
Graph test_graph(uint64_t salt, int64_t n = 300) {
  auto rng = rng_for(salt);
  std::set<std::pair<int64_t, int64_t>> edges;
  std::uniform_int_distribution<int64_t> node(0, n - 6);
  for (int64_t v = 0; v < n - 5; ++v) {
    const int64_t deg = v == 0 ? n / 2 : std::uniform_int_distribution<int64_t>(0, 12)(rng);
    for (int64_t k = 0; k < deg; ++k) {
      const int64_t u = node(rng);
      if (u != v) edges.insert({u, v});
    }
  }
  std::vector<std::pair<int64_t, int64_t>> list(edges.begin(), edges.end());
  std::shuffle(list.begin(), list.end(), rng);
  std::vector<int64_t> src, dst;
  for (auto [u, v] : list) {
    src.push_back(u);
    dst.push_back(v);
  }
  return Graph::from_coo(src, dst, n);
}

std::vector<int64_t> distinct_seeds(uint64_t salt, int64_t n, int64_t b) {
  auto rng = rng_for(salt);
  std::vector<int64_t> all(static_cast<size_t>(n));
  std::iota(all.begin(), all.end(), int64_t{0});
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(static_cast<size_t>(b));
  return all;
}

// A block read back to the host.
struct HostBlock {
  int64_t num_src, num_dst;
  std::vector<int64_t> src_nodes, edge_ids, offsets;
  std::vector<int32_t> sources;
  std::vector<float> weights;
};

HostBlock host_block(const Block& b) {
  HostBlock h{b.num_src, b.num_dst, b.src_nodes.to_host_vector(), b.edge_ids.to_host_vector(),
              b.graph.offsets().to_host_vector(), b.graph.sources().to_host_vector(), {}};
  if (b.graph.has_edge_weight()) h.weights = b.graph.edge_weight().to_host_vector();
  return h;
}

// Everything a block promises, against the graph it was sampled from (host copy).
// fanout: the expected per-destination count rule (0: skip the count check).
void expect_valid_block(const HostBlock& b, const Graph& g, int64_t fanout) {
  const std::vector<int64_t> off = g.offsets().to_host_vector();
  const std::vector<int32_t> src = g.sources().to_host_vector();
  const std::vector<int32_t> dst = g.destinations().to_host_vector();
  ASSERT_LE(b.num_dst, b.num_src);
  ASSERT_EQ(static_cast<int64_t>(b.src_nodes.size()), b.num_src);
  ASSERT_EQ(static_cast<int64_t>(b.offsets.size()), b.num_src + 1);
  EXPECT_EQ(std::set<int64_t>(b.src_nodes.begin(), b.src_nodes.end()).size(), b.src_nodes.size())
      << "source nodes are distinct";
  EXPECT_TRUE(std::is_sorted(b.src_nodes.begin() + b.num_dst, b.src_nodes.end()))
      << "non-destination sources come in ascending id";
  std::vector<char> referenced(static_cast<size_t>(b.num_src), 0);
  for (int64_t i = 0; i < b.num_src; ++i) {
    const int64_t v = b.src_nodes[i];
    ASSERT_GE(v, 0);
    ASSERT_LT(v, g.num_nodes());
    const int64_t k = b.offsets[i + 1] - b.offsets[i];
    if (i >= b.num_dst) {
      EXPECT_EQ(k, 0) << "row " << i << " is a source-only node and must have no edges";
      continue;
    }
    const int64_t d = off[v + 1] - off[v];
    if (fanout != 0) {
      EXPECT_EQ(k, fanout < 0 ? d : std::min(fanout, d)) << "destination " << v;
    }
    std::set<int64_t> seen_edges, seen_sources;
    int64_t prev = -1;
    for (int64_t e = b.offsets[i]; e < b.offsets[i + 1]; ++e) {
      const int64_t u_local = b.sources[e];
      ASSERT_GE(u_local, 0);
      ASSERT_LT(u_local, b.num_src);
      referenced[u_local] = 1;
      const int64_t u = b.src_nodes[u_local];
      const int64_t id = b.edge_ids[e];
      ASSERT_GE(id, 0);
      ASSERT_LT(id, g.num_edges());
      EXPECT_EQ(src[id], u) << "edge " << e << " of destination " << v << " names CSR edge " << id;
      EXPECT_EQ(dst[id], v) << "edge " << e << " of destination " << v << " names CSR edge " << id;
      EXPECT_TRUE(seen_edges.insert(id).second) << "edge " << id << " sampled twice for " << v;
      EXPECT_TRUE(seen_sources.insert(u).second) << "neighbour " << u << " sampled twice for " << v;
      EXPECT_GE(u, prev) << "sources ascend within a row";
      prev = u;
    }
  }
  for (int64_t i = b.num_dst; i < b.num_src; ++i) {
    EXPECT_TRUE(referenced[i]) << "source-only node " << b.src_nodes[i] << " is read by no edge";
  }
}

// The chain of blocks: outermost first, each block's destinations are the next block's
// sources, the last block's destinations are the seeds, input_nodes the first sources.
void expect_valid_chain(const MiniBatch& mb, const std::vector<int64_t>& seeds, const std::vector<HostBlock>& hb) {
  ASSERT_EQ(hb.size(), mb.blocks.size());
  EXPECT_EQ(mb.seed_nodes.to_host_vector(), seeds);
  EXPECT_EQ(mb.input_nodes.to_host_vector(), hb.front().src_nodes);
  for (size_t l = 0; l < hb.size(); ++l) {
    const std::vector<int64_t> expected_dst =
        l + 1 < hb.size() ? hb[l + 1].src_nodes : seeds;
    ASSERT_EQ(hb[l].num_dst, static_cast<int64_t>(expected_dst.size())) << "block " << l;
    EXPECT_TRUE(std::equal(expected_dst.begin(), expected_dst.end(), hb[l].src_nodes.begin()))
        << "block " << l << ": the destination nodes are the first source nodes";
  }
}

using NeighborSamplerTest = DeviceTest;

TEST_P(NeighborSamplerTest, BlocksAreValidSubgraphsWithMinFanoutDegreeNeighbours) {
  const Graph host = test_graph(1);
  const Graph g = host.to(device());
  const std::vector<std::vector<int64_t>> fanout_sets = {{3, 5}, {-1, 2}, {1}, {70, 4, 2}};
  for (const auto& fanouts : fanout_sets) {
    NeighborSampler sampler(g, fanouts);
    for (int64_t B : {0, 1, 7, 33, 64, 257}) {
      std::vector<int64_t> seeds = distinct_seeds(B, g.num_nodes(), B);
      if (B == 7 && std::find(seeds.begin(), seeds.end(), 0) == seeds.end()) seeds[3] = 0;  // the hub
      Generator gen(11);
      const MiniBatch mb = sampler.sample(seeds, gen);
      ASSERT_EQ(mb.num_layers(), static_cast<int64_t>(fanouts.size()));
      std::vector<HostBlock> hb;
      for (size_t l = 0; l < fanouts.size(); ++l) {
        EXPECT_EQ(mb.blocks[l].graph.device(), device());
        EXPECT_EQ(mb.blocks[l].src_nodes.device(), device());
        hb.push_back(host_block(mb.blocks[l]));
        SCOPED_TRACE("fanout " + std::to_string(fanouts[l]) + ", B " + std::to_string(B) + ", block " +
                     std::to_string(l));
        expect_valid_block(hb.back(), host, fanouts[l]);
      }
      expect_valid_chain(mb, seeds, hb);
    }
  }
}

TEST_P(NeighborSamplerTest, FullFanoutIsExactlyTheInEdges) {
  const Graph host = test_graph(2);
  NeighborSampler sampler(host.to(device()), {-1, -1});
  const std::vector<int64_t> off = host.offsets().to_host_vector();
  const std::vector<int64_t> seeds = distinct_seeds(3, host.num_nodes(), 40);
  Generator gen(0);
  const MiniBatch mb = sampler.sample(seeds, gen);
  for (const Block& block : mb.blocks) {
    const HostBlock b = host_block(block);
    for (int64_t i = 0; i < b.num_dst; ++i) {
      const int64_t v = b.src_nodes[i];
      std::vector<int64_t> got(b.edge_ids.begin() + b.offsets[i], b.edge_ids.begin() + b.offsets[i + 1]);
      std::sort(got.begin(), got.end());
      std::vector<int64_t> expected(static_cast<size_t>(off[v + 1] - off[v]));
      std::iota(expected.begin(), expected.end(), off[v]);
      EXPECT_EQ(got, expected) << "in-edges of " << v;
    }
  }
  // The 2-hop input set is every node within two hops of a seed (plus the seeds).
  const std::vector<int32_t> src = host.sources().to_host_vector();
  std::set<int64_t> hop(seeds.begin(), seeds.end());
  for (int step = 0; step < 2; ++step) {
    std::set<int64_t> next = hop;
    for (int64_t v : hop) {
      for (int64_t k = off[v]; k < off[v + 1]; ++k) next.insert(src[k]);
    }
    hop = next;
  }
  const std::vector<int64_t> input = mb.input_nodes.to_host_vector();
  EXPECT_EQ(std::set<int64_t>(input.begin(), input.end()), hop);
}

TEST_P(NeighborSamplerTest, SameGeneratorStateGivesTheSameBatchAtAnyThreadCount) {
  const Graph g = test_graph(4, 2000).to(device());
  NeighborSampler sampler(g, {4, 6});
  const std::vector<int64_t> seeds = distinct_seeds(5, g.num_nodes(), 500);
  auto run = [&](int threads, uint64_t seed) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    Generator gen(seed);
    const MiniBatch mb = sampler.sample(seeds, gen);
    omp_set_num_threads(before);
    std::vector<HostBlock> hb;
    for (const Block& b : mb.blocks) hb.push_back(host_block(b));
    return hb;
  };
  const auto a = run(1, 7), b = run(2, 7), c = run(2, 8);
  for (size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].src_nodes, b[l].src_nodes) << "block " << l;
    EXPECT_EQ(a[l].edge_ids, b[l].edge_ids) << "block " << l;
    EXPECT_EQ(a[l].sources, b[l].sources) << "block " << l;
    EXPECT_EQ(a[l].offsets, b[l].offsets) << "block " << l;
  }
  EXPECT_NE(a.back().edge_ids, c.back().edge_ids) << "another seed samples other neighbours";
  // Successive calls on one generator take fresh streams: different batches.
  Generator gen(7);
  const MiniBatch first = sampler.sample(seeds, gen);
  const MiniBatch second = sampler.sample(seeds, gen);
  EXPECT_NE(first.blocks.back().edge_ids.to_host_vector(), second.blocks.back().edge_ids.to_host_vector());
}

INSTANTIATE_TEST_SUITE_P(Devices, NeighborSamplerTest, testing::ValuesIn(all_devices()), device_name);

// Chi-square upper bands at p = 0.001 (fixed seeds: the test is deterministic; the band
// only has to be wide enough for a correct sampler and narrow enough to catch a bias).
double chi2_band(int dof) {
  switch (dof) {
    case 9: return 27.88;
    case 14: return 36.12;
    case 19: return 43.82;
    case 49: return 85.35;
    default: return 3.0 * dof + 20;
  }
}

double chi2(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x = 0;
  for (size_t i = 0; i < observed.size(); ++i) x += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  return x;
}

TEST(NeighborSampler, DrawsAreUniformOverNeighboursAndSubsets) {
  // Every destination draws independently (Philox counters keyed by its id), so one
  // call over many destinations that share their in-neighbours gives many trials.
  // Destinations 0..2999 have in-neighbours 3000..3009 (fanout 3: each neighbour w.p.
  // 3/10); 3010..5999 have 6000..6005 (fanout 2: each of the 15 pairs w.p. 1/15);
  // 7000..7299 have 7300..7449 (fanout 100 > 64 draws: the bitmap path).
  const int64_t trials = 3000;
  std::vector<int64_t> src, dst;
  for (int64_t v = 0; v < trials; ++v) {
    for (int64_t u = 3000; u < 3010; ++u) src.push_back(u), dst.push_back(v);
  }
  for (int64_t v = 3010; v < 3010 + trials; ++v) {
    for (int64_t u = 6000; u < 6006; ++u) src.push_back(u), dst.push_back(v);
  }
  for (int64_t v = 7000; v < 7300; ++v) {
    for (int64_t u = 7300; u < 7450; ++u) src.push_back(u), dst.push_back(v);
  }
  const Graph g = Graph::from_coo(src, dst, 7450);
  auto seeds_in = [](int64_t lo, int64_t hi) {
    std::vector<int64_t> s(static_cast<size_t>(hi - lo));
    std::iota(s.begin(), s.end(), lo);
    return s;
  };
  {
    NeighborSampler sampler(g, {3});
    Generator gen(1);
    const HostBlock b = host_block(sampler.sample(seeds_in(0, trials), gen).blocks[0]);
    std::vector<double> count(10, 0.0);
    for (int32_t u : b.sources) count[b.src_nodes[u] - 3000] += 1;
    EXPECT_LT(chi2(count, std::vector<double>(10, trials * 3.0 / 10.0)), chi2_band(9)) << "neighbour frequencies";
  }
  {
    NeighborSampler sampler(g, {2});
    Generator gen(2);
    const HostBlock b = host_block(sampler.sample(seeds_in(3010, 3010 + trials), gen).blocks[0]);
    std::map<std::pair<int64_t, int64_t>, double> pairs;
    for (int64_t i = 0; i < trials; ++i) {
      ASSERT_EQ(b.offsets[i + 1] - b.offsets[i], 2);
      pairs[{b.src_nodes[b.sources[b.offsets[i]]], b.src_nodes[b.sources[b.offsets[i] + 1]]}] += 1;
    }
    ASSERT_EQ(pairs.size(), 15u) << "every pair occurs";
    std::vector<double> observed;
    for (auto& [p, c] : pairs) observed.push_back(c);
    EXPECT_LT(chi2(observed, std::vector<double>(15, trials / 15.0)), chi2_band(14)) << "pair frequencies";
  }
  {
    NeighborSampler sampler(g, {100});
    Generator gen(3);
    const HostBlock b = host_block(sampler.sample(seeds_in(7000, 7300), gen).blocks[0]);
    ASSERT_EQ(b.sources.size(), 300u * 100u);
    std::vector<double> count(20, 0.0);  // neighbours bucketed by (id - 7300) % 20
    for (int32_t u : b.sources) count[(b.src_nodes[u] - 7300) % 20] += 1;
    std::vector<double> expected(20, 0.0);
    for (int64_t u = 7300; u < 7450; ++u) expected[(u - 7300) % 20] += 300 * 100.0 / 150.0;
    EXPECT_LT(chi2(count, expected), chi2_band(19)) << "bitmap path frequencies";
  }
}

TEST(NeighborSampler, BadInputThrowsAndLeavesTheGeneratorAlone) {
  const Graph g = test_graph(6);
  auto message_of = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message_of([&] { NeighborSampler(g, {}); }).find("fanouts must name at least one layer"),
            std::string::npos);
  EXPECT_NE(message_of([&] { NeighborSampler(g, {5, 0}); }).find("fanouts[1] (0)"), std::string::npos);
  EXPECT_NE(message_of([&] { NeighborSampler(g, {-2}); }).find("fanouts[0] (-2)"), std::string::npos);
  NeighborSampler sampler(g, {2, 2});
  Generator gen(3);
  EXPECT_NE(message_of([&] { sampler.sample(std::vector<int64_t>{1, 300, 2}, gen); })
                .find("NeighborSampler: seed_nodes[1] (300) must lie in [0, 300)"),
            std::string::npos);
  EXPECT_NE(message_of([&] { sampler.sample(std::vector<int64_t>{-1}, gen); }).find("seed_nodes[0] (-1)"),
            std::string::npos);
  EXPECT_NE(message_of([&] { sampler.sample(std::vector<int64_t>{4, 5, 9, 5, 4}, gen); })
                .find("seed_nodes[3] (5) repeats seed_nodes[1]"),
            std::string::npos);
  Generator fresh(3);
  EXPECT_EQ(gen.next_stream(), fresh.next_stream()) << "a rejected call takes no stream";
}

// ---------------------------------------------------------------------------------
// Graph::from_csr
// ---------------------------------------------------------------------------------

TEST(GraphFromCsr, EqualsTheGraphBuiltFromTheSameEdgesAndValidates) {
  const Graph g = test_graph(7, 50);
  const std::vector<int64_t> off = g.offsets().to_host_vector();
  const std::vector<int32_t> src = g.sources().to_host_vector();
  std::vector<float> w(src.size());
  for (size_t k = 0; k < w.size(); ++k) w[k] = 0.5f + static_cast<float>(k % 7);
  const Graph h = Graph::from_csr(off, src, w);
  EXPECT_EQ(h.num_nodes(), g.num_nodes());
  EXPECT_EQ(h.num_edges(), g.num_edges());
  EXPECT_EQ(h.destinations().to_host_vector(), g.destinations().to_host_vector());
  EXPECT_EQ(h.sources().to_host_vector(), src);
  EXPECT_EQ(h.edge_weight().to_host_vector(), w);
  std::vector<int64_t> iota(src.size());
  std::iota(iota.begin(), iota.end(), int64_t{0});
  EXPECT_EQ(h.edge_ids().to_host_vector(), iota);
  EXPECT_EQ(Graph::from_csr(std::vector<int64_t>{0}, std::vector<int32_t>{}).num_nodes(), 0);

  const std::vector<int64_t> bad_off = {0, 2, 1, 3};
  const std::vector<int32_t> three = {0, 1, 2};
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{}, three), std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(bad_off, three), std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{1, 1, 3, 3}, three), std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{0, 1, 2, 2}, three), std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{0, 1, 2, 3}, std::vector<int32_t>{0, 3, 1}),
               std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{0, 1, 2, 3}, three, std::vector<float>{1, NAN, 1}),
               std::invalid_argument);
  EXPECT_THROW(Graph::from_csr(std::vector<int64_t>{0, 1, 2, 3}, three, std::vector<float>{1, 1}),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------
// SeedSampler
// ---------------------------------------------------------------------------------

using SeedSamplerTest = DeviceTest;

TEST_P(SeedSamplerTest, FrequenciesFollowThePrioritiesAndWeightsAreImportanceWeights) {
  // 60 nodes: 50 with priorities 1..50 (shuffled), 10 with priority 0.
  auto rng = rng_for(20);
  std::vector<float> p(60, 0.0f);
  std::vector<int64_t> order(60);
  std::iota(order.begin(), order.end(), int64_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  for (int i = 0; i < 50; ++i) p[order[i]] = static_cast<float>(i + 1);
  const double total = 50.0 * 51.0 / 2.0;
  for (bool stratified : {false, true}) {
    SeedSamplerOptions o;
    o.stratified = stratified;
    o.device = device();
    SeedSampler sampler(p, o);
    EXPECT_EQ(sampler.population(), 50);
    EXPECT_FLOAT_EQ(sampler.total(), static_cast<float>(total));
    std::vector<double> count(60, 0.0);
    const int batches = 400, B = 50;
    double estimate = 0;  // of the population mean of f(i) = i
    for (int b = 0; b < batches; ++b) {
      const SeedBatch batch = sampler.sample(B, 1000 + b);
      ASSERT_EQ(static_cast<int64_t>(batch.draws.size()), B);
      ASSERT_TRUE(std::is_sorted(batch.nodes.begin(), batch.nodes.end()));
      ASSERT_EQ(std::accumulate(batch.counts.begin(), batch.counts.end(), int64_t{0}), B);
      for (size_t k = 0; k < batch.nodes.size(); ++k) {
        const int64_t v = batch.nodes[k];
        ASSERT_GT(p[v], 0.0f) << "a zero-priority node was drawn";
        count[v] += static_cast<double>(batch.counts[k]);
        const double expected_w = batch.counts[k] / (double(B) * 50.0 * (p[v] / total));
        EXPECT_NEAR(batch.weights[k], expected_w, 1e-5 * expected_w);
        estimate += batch.weights[k] * static_cast<double>(v);
      }
    }
    std::vector<double> observed, expected;
    for (int v = 0; v < 60; ++v) {
      if (p[v] == 0) continue;
      observed.push_back(count[v]);
      expected.push_back(batches * B * p[v] / total);
    }
    EXPECT_LT(chi2(observed, expected), chi2_band(49)) << (stratified ? "stratified" : "independent");
    // The weighted batch sums estimate the population mean of f(i) = i without bias.
    double mean = 0;
    for (int v = 0; v < 60; ++v) mean += p[v] > 0 ? v / 50.0 : 0.0;
    EXPECT_NEAR(estimate / batches, mean, 0.03 * mean) << (stratified ? "stratified" : "independent");
  }
}

TEST_P(SeedSamplerTest, PriorityUpdatesTakeEffectAndBadUpdatesChangeNothing) {
  SeedSamplerOptions o;
  o.device = device();
  const std::vector<int64_t> train = {2, 3, 5, 7, 11, 13};
  SeedSampler sampler = SeedSampler::uniform(16, train, o);
  EXPECT_EQ(sampler.population(), 6);
  // Node 5 gets almost all the mass, node 2 none: 5 dominates, 2 is never drawn.
  const std::vector<int64_t> nodes = {5, 2, 7, 7};
  const std::vector<float> values = {1000.0f, 0.0f, 9.0f, 0.5f};  // 7: the last write (0.5) wins
  sampler.update_priorities(nodes, values);
  EXPECT_EQ(sampler.population(), 5);
  EXPECT_EQ(sampler.priorities()[5], 1000.0f);
  EXPECT_EQ(sampler.priorities()[7], 0.5f);
  EXPECT_FLOAT_EQ(sampler.total(), 1000.0f + 0.5f + 3.0f);
  int64_t fives = 0, draws = 0;
  for (int b = 0; b < 200; ++b) {
    const SeedBatch batch = sampler.sample(5, b);
    for (int64_t v : batch.draws) {
      EXPECT_NE(v, 2);
      fives += v == 5;
      ++draws;
    }
  }
  EXPECT_GT(static_cast<double>(fives) / draws, 0.98);

  // Bad updates: nothing changes (priorities, total, the tree's nodes, the population).
  const std::vector<float> before = sampler.priorities();
  const std::vector<float> tree_before = [&] {
    std::vector<float> h(static_cast<size_t>(sampler.tree().nodes().size));
    copy_bytes(h.data(), Device::cpu(), sampler.tree().nodes().data, device(), h.size() * sizeof(float));
    return h;
  }();
  EXPECT_THROW(sampler.update_priorities(std::vector<int64_t>{3, 16}, std::vector<float>{1, 1}),
               std::invalid_argument);
  EXPECT_THROW(sampler.update_priorities(std::vector<int64_t>{3, 4}, std::vector<float>{1, -1}),
               std::invalid_argument);
  EXPECT_THROW(sampler.update_priorities(std::vector<int64_t>{3}, std::vector<float>{NAN}), std::invalid_argument);
  EXPECT_THROW(sampler.update_priorities(std::vector<int64_t>{3, 4}, std::vector<float>{1}), std::invalid_argument);
  EXPECT_EQ(sampler.priorities(), before);
  std::vector<float> tree_after(tree_before.size());
  copy_bytes(tree_after.data(), Device::cpu(), sampler.tree().nodes().data, device(), tree_after.size() * sizeof(float));
  EXPECT_EQ(tree_after, tree_before);
  EXPECT_EQ(sampler.population(), 5);
}

INSTANTIATE_TEST_SUITE_P(Devices, SeedSamplerTest, testing::ValuesIn(all_devices()), device_name);

TEST(SeedSampler, BadInputThrows) {
  const std::vector<int64_t> train = {1, 2, 3};
  SeedSampler sampler = SeedSampler::uniform(5, train);
  try {
    sampler.sample(4, 0);
    ADD_FAILURE() << "a batch larger than the population was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SeedSampler: batch_size (4) must lie in [0, population] = [0, 3]"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(sampler.sample(-1, 0), std::invalid_argument);
  EXPECT_TRUE(sampler.sample(0, 0).nodes.empty());
  EXPECT_EQ(sampler.sample(3, 0).counts.size() > 0, true);
  EXPECT_THROW(SeedSampler::uniform(5, std::vector<int64_t>{1, 5}), std::invalid_argument);
  EXPECT_THROW(SeedSampler(std::vector<float>{}), std::invalid_argument);
  EXPECT_THROW(SeedSampler(std::vector<float>{1, -2}), std::invalid_argument);
  EXPECT_THROW(SeedSampler(std::vector<float>{1, INFINITY}), std::invalid_argument);
}

TEST_P(SeedSamplerTest, ATotalThatOverflowsIsAnErrorNotDraws) {
  // Each priority is finite, their sum is not: the tree would draw -1 for every seed.
  SeedSamplerOptions options;
  options.device = device();
  const SeedSampler sampler(std::vector<float>{3e38f, 3e38f, 1.0f}, options);
  try {
    sampler.sample(2, 0);
    ADD_FAILURE() << "an infinite total was sampled from";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SeedSampler: the priorities' total (inf) must be finite and > 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(SeedSampler, DegreePrioritiesAreOnePlusInDegreeToThePower) {
  const Graph g = test_graph(8, 40);
  const std::vector<int64_t> nodes = {0, 3, 9, 39};
  const std::vector<float> deg = g.in_degree().to_host_vector();
  SeedSampler sampler = SeedSampler::by_degree(g, nodes, 0.5f);
  for (int64_t v = 0; v < 40; ++v) {
    const bool chosen = std::find(nodes.begin(), nodes.end(), v) != nodes.end();
    EXPECT_FLOAT_EQ(sampler.priorities()[v], chosen ? std::pow(1.0f + deg[v], 0.5f) : 0.0f) << v;
  }
}

// ---------------------------------------------------------------------------------
// LayerwiseSampler
// ---------------------------------------------------------------------------------

// Â x for the rows `seeds` (exact, double), from the sampler's own Â.
std::vector<double> exact_propagation(const Graph& a, const std::vector<double>& x, const std::vector<int64_t>& rows) {
  const std::vector<int64_t> off = a.offsets().to_host_vector();
  const std::vector<int32_t> src = a.sources().to_host_vector();
  const std::vector<float> w = a.edge_weight().to_host_vector();
  std::vector<double> out;
  for (int64_t v : rows) {
    double s = 0;
    for (int64_t k = off[v]; k < off[v + 1]; ++k) s += w[k] * x[src[k]];
    out.push_back(s);
  }
  return out;
}

TEST(LayerwiseSampler, UnnormalisedBlocksAreUnbiasedEstimatesOfThePropagation) {
  const Graph g = test_graph(9, 60);
  std::vector<double> x(60);
  auto rng = rng_for(21);
  for (double& v : x) v = std::uniform_real_distribution<double>(-1, 1)(rng);
  const std::vector<int64_t> seeds = {0, 4, 17, 30, 41};
  for (LayerwiseScheme scheme : {LayerwiseScheme::FastGCN, LayerwiseScheme::LADIES}) {
    LayerwiseSamplerOptions o;
    o.scheme = scheme;
    o.row_normalize = false;
    LayerwiseSampler sampler(g, {8}, o);
    SerialOpenMP serial;
    const std::vector<double> exact = exact_propagation(sampler.normalized_graph(), x, seeds);
    const int trials = 1500;
    std::vector<double> sum(seeds.size(), 0.0), sum2(seeds.size(), 0.0);
    Generator gen(5);
    for (int t = 0; t < trials; ++t) {
      const MiniBatch mb = sampler.sample(seeds, gen);
      const HostBlock b = host_block(mb.blocks.back());
      ASSERT_EQ(b.num_dst, static_cast<int64_t>(seeds.size()));
      for (size_t i = 0; i < seeds.size(); ++i) {
        double est = 0;
        for (int64_t e = b.offsets[i]; e < b.offsets[i + 1]; ++e) est += b.weights[e] * x[b.src_nodes[b.sources[e]]];
        sum[i] += est;
        sum2[i] += est * est;
      }
    }
    for (size_t i = 0; i < seeds.size(); ++i) {
      const double mean = sum[i] / trials;
      const double sd = std::sqrt(std::max(sum2[i] / trials - mean * mean, 0.0));
      EXPECT_NEAR(mean, exact[i], 5.0 * sd / std::sqrt(double(trials)) + 1e-6)
          << (scheme == LayerwiseScheme::LADIES ? "LADIES" : "FastGCN") << " row " << seeds[i];
    }
  }
}

TEST(LayerwiseSampler, RowNormalisedBlocksAreValidAndDeterministic) {
  const Graph g = test_graph(10, 200);
  for (LayerwiseScheme scheme : {LayerwiseScheme::FastGCN, LayerwiseScheme::LADIES}) {
    LayerwiseSamplerOptions o;
    o.scheme = scheme;
    LayerwiseSampler sampler(g, {64, 32}, o);
    const Graph& a = sampler.normalized_graph();
    const std::vector<float> aw = a.edge_weight().to_host_vector();
    const std::vector<int64_t> seeds = distinct_seeds(11, 200, 20);
    Generator gen(1), again(1);
    const MiniBatch mb = sampler.sample(seeds, gen);
    const MiniBatch mb2 = sampler.sample(seeds, again);
    std::vector<HostBlock> hb;
    for (size_t l = 0; l < mb.blocks.size(); ++l) {
      hb.push_back(host_block(mb.blocks[l]));
      const HostBlock& b = hb.back();
      expect_valid_block(b, a, /*fanout=*/0);
      EXPECT_EQ(b.weights, host_block(mb2.blocks[l]).weights) << "same generator state, same block";
      for (int64_t i = 0; i < b.num_dst; ++i) {
        if (b.offsets[i] == b.offsets[i + 1]) continue;
        double s = 0;
        for (int64_t e = b.offsets[i]; e < b.offsets[i + 1]; ++e) {
          EXPECT_GT(b.weights[e], 0.0f);
          EXPECT_GT(aw[b.edge_ids[e]], 0.0f);
          s += b.weights[e];
        }
        EXPECT_NEAR(s, 1.0, 1e-5) << "row " << i << " of block " << l;
      }
      // At most t distinct drawn nodes beyond the destinations.
      EXPECT_LE(b.num_src - b.num_dst, sampler.layer_sizes()[l]);
    }
    expect_valid_chain(mb, seeds, hb);
  }
  // LADIES draws only nodes some destination reads: with enough draws every destination
  // with in-edges keeps at least one.
  LayerwiseSampler ladies(g, {400});
  Generator gen(2);
  const std::vector<int64_t> seeds = distinct_seeds(12, 195, 10);
  const HostBlock b = host_block(ladies.sample(seeds, gen).blocks[0]);
  for (int64_t i = 0; i < b.num_dst; ++i) EXPECT_GT(b.offsets[i + 1] - b.offsets[i], 0) << "destination " << i;
}

TEST(LayerwiseSampler, FastGcnProposalIsTheSquaredColumnNorm) {
  const Graph g = test_graph(13, 30);
  LayerwiseSamplerOptions o;
  o.scheme = LayerwiseScheme::FastGCN;
  LayerwiseSampler sampler(g, {5}, o);
  const Graph& a = sampler.normalized_graph();
  const std::vector<int32_t> src = a.sources().to_host_vector();
  const std::vector<float> w = a.edge_weight().to_host_vector();
  std::vector<double> q(30, 0.0);
  for (size_t k = 0; k < src.size(); ++k) q[src[k]] += double(w[k]) * w[k];
  const double total = std::accumulate(q.begin(), q.end(), 0.0);
  const std::vector<double> got = sampler.fastgcn_proposal();
  for (int v = 0; v < 30; ++v) EXPECT_NEAR(got[v], q[v] / total, 1e-6) << v;
}

TEST(LayerwiseSampler, BadInputThrows) {
  const Graph g = test_graph(14, 30);
  EXPECT_THROW(LayerwiseSampler(g, {}), std::invalid_argument);
  EXPECT_THROW(LayerwiseSampler(g, {4, 0}), std::invalid_argument);
  LayerwiseSampler sampler(g, {4});
  Generator gen(0);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{30}, gen), std::invalid_argument);
  EXPECT_THROW(sampler.sample(std::vector<int64_t>{3, 3}, gen), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
