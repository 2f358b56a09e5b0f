// Sampler cases on an R-MAT power-law graph: one GraphSAGE minibatch (1024 seeds,
// fanouts {10, 25}) from NeighborSampler, against the textbook sampler it replaces
// (sequential, partial Fisher–Yates on a copy of each row, relabelling through a hash
// map — the shape of PyG's early sample_adj), measured in the same run; and one
// LADIES / FastGCN minibatch (1024 seeds, 1024 draws per layer).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <unordered_map>

#include "bench.hpp"
#include "edgewise/gnn/sampling/layerwise_sampler.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"
#include "edgewise/gnn/data/synthetic.hpp"

namespace edgewise::bench {
namespace {

constexpr int64_t kSeeds = 1024;
constexpr int kSeedSets = 16;  // distinct seed batches cycled through

struct Workload {
  gnn::Graph graph;
  std::vector<std::vector<int64_t>> seeds;  // kSeedSets x [kSeeds] distinct ids
};

// One R-MAT graph per size, shared by every case of the run (generation takes seconds).
std::shared_ptr<const Workload> workload(bool quick, uint64_t seed) {
  static std::shared_ptr<const Workload> cached[2];
  std::shared_ptr<const Workload>& w = cached[quick ? 1 : 0];
  if (w) return w;
  const int64_t n = quick ? int64_t{1} << 17 : int64_t{1} << 20;
  const int64_t e = quick ? 1'000'000 : 10'000'000;
  gnn::RmatOptions o;
  o.symmetrize = true;
  const gnn::Dataset d = gnn::rmat_graph(n, e, 0.57, 0.19, 0.19, seed, o);
  auto out = std::make_shared<Workload>();
  const auto src = d.src(), dst = d.dst();
  out->graph = gnn::Graph::from_coo(std::vector<int64_t>(src.begin(), src.end()),
                                    std::vector<int64_t>(dst.begin(), dst.end()), n);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) all[i] = i;
  for (int s = 0; s < kSeedSets; ++s) {
    for (int64_t i = 0; i < kSeeds; ++i) std::swap(all[i], all[i + rng() % (n - i)]);
    out->seeds.emplace_back(all.begin(), all.begin() + kSeeds);
  }
  w = out;
  return w;
}

std::string shape(bool quick) { return quick ? "rmat-N=128K,E=1M" : "rmat-N=1M,E=10M"; }

// The textbook sampler: per destination, copy the row, partial Fisher–Yates with a
// per-node mt19937, map each sampled id through an unordered_map to its local id.
struct NaiveBlock {
  std::vector<int64_t> src_nodes, offsets;
  std::vector<int32_t> sources;
};
std::vector<NaiveBlock> naive_sample(const gnn::Graph& g, const std::vector<int64_t>& seeds,
                                     const std::vector<int64_t>& fanouts, uint64_t seed) {
  const int64_t* off = g.offsets().data();
  const int32_t* src = g.sources().data();
  std::vector<NaiveBlock> blocks(fanouts.size());
  std::vector<int64_t> frontier = seeds;
  std::vector<int32_t> row;
  for (int64_t l = static_cast<int64_t>(fanouts.size()) - 1; l >= 0; --l) {
    NaiveBlock& b = blocks[l];
    std::unordered_map<int64_t, int32_t> local;
    b.src_nodes = frontier;
    for (size_t i = 0; i < frontier.size(); ++i) local.emplace(frontier[i], static_cast<int32_t>(i));
    b.offsets.push_back(0);
    for (int64_t v : frontier) {
      row.assign(src + off[v], src + off[v + 1]);
      const int64_t d = static_cast<int64_t>(row.size());
      const int64_t k = std::min(fanouts[l], d);
      std::mt19937_64 rng(seed ^ (static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ull));
      for (int64_t j = 0; j < k; ++j) {
        std::swap(row[j], row[j + static_cast<int64_t>(rng() % static_cast<uint64_t>(d - j))]);
        const auto [it, inserted] = local.try_emplace(row[j], static_cast<int32_t>(b.src_nodes.size()));
        if (inserted) b.src_nodes.push_back(row[j]);
        b.sources.push_back(it->second);
      }
      b.offsets.push_back(static_cast<int64_t>(b.sources.size()));
    }
    frontier = b.src_nodes;
  }
  return blocks;
}

std::string describe(const gnn::MiniBatch& mb) {
  int64_t edges = 0;
  for (const gnn::Block& b : mb.blocks) edges += b.graph.num_edges();
  return std::to_string(mb.input_nodes.numel()) + " input nodes, " + std::to_string(edges) + " sampled edges";
}

EW_BENCH_CASES {
  const Device cpu = Device::cpu();
  const std::vector<int64_t> fanouts = {10, 25};
  register_case({"samplers/neighbor/hashmap-baseline/fanouts=10,25/B=1024", cpu, [=](const Options& o) {
                   auto w = workload(o.quick, o.seed);
                   auto step = std::make_shared<uint64_t>(0);
                   Prepared p;
                   p.run = [w, step, fanouts] {
                     const uint64_t s = (*step)++;
                     auto blocks = naive_sample(w->graph, w->seeds[s % kSeedSets], fanouts, s);
                     if (blocks.empty()) std::abort();
                   };
                   p.detail = "sequential, hash-map relabelling, " + shape(o.quick);
                   p.max_repeats = 30;
                   return p;
                 }});
  register_case({"samplers/neighbor/edgewise/fanouts=10,25/B=1024", cpu, [=](const Options& o) {
                   auto w = workload(o.quick, o.seed);
                   auto sampler = std::make_shared<gnn::NeighborSampler>(w->graph, fanouts);
                   auto gen = std::make_shared<gnn::Generator>(o.seed);
                   auto step = std::make_shared<uint64_t>(0);
                   Prepared p;
                   p.detail = describe(sampler->sample(w->seeds[0], *gen)) + ", " + shape(o.quick);
                   p.run = [w, sampler, gen, step] {
                     const gnn::MiniBatch mb = sampler->sample(w->seeds[(*step)++ % kSeedSets], *gen);
                     if (mb.blocks.empty()) std::abort();
                   };
                   p.baseline = "samplers/neighbor/hashmap-baseline/fanouts=10,25/B=1024";
                   return p;
                 }});
  for (gnn::LayerwiseScheme scheme : {gnn::LayerwiseScheme::LADIES, gnn::LayerwiseScheme::FastGCN}) {
    const std::string name = scheme == gnn::LayerwiseScheme::LADIES ? "ladies" : "fastgcn";
    register_case({"samplers/layerwise/" + name + "/draws=1024,1024/B=1024", cpu, [=](const Options& o) {
                     auto w = workload(o.quick, o.seed);
                     gnn::LayerwiseSamplerOptions lo;
                     lo.scheme = scheme;
                     auto sampler = std::make_shared<gnn::LayerwiseSampler>(w->graph, std::vector<int64_t>{1024, 1024}, lo);
                     auto gen = std::make_shared<gnn::Generator>(o.seed);
                     auto step = std::make_shared<uint64_t>(0);
                     Prepared p;
                     p.detail = describe(sampler->sample(w->seeds[0], *gen)) + ", " + shape(o.quick);
                     p.run = [w, sampler, gen, step] {
                       const gnn::MiniBatch mb = sampler->sample(w->seeds[(*step)++ % kSeedSets], *gen);
                       if (mb.blocks.empty()) std::abort();
                     };
                     p.baseline = "samplers/neighbor/edgewise/fanouts=10,25/B=1024";
                     return p;
                   }});
  }
}

}  // namespace
}  // namespace edgewise::bench
