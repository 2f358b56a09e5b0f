// NeighborSampler: per-layer uniform in-neighbour sampling without replacement
// (Floyd's algorithm on Philox draws), relabelled into CSR blocks.
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"

#include <algorithm>
#include <numeric>
#include <memory>

#include "edgewise/kernels/common/check.hpp"
#include "sampling.hpp"
#include "sampling_core.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "NeighborSampler";

}  // namespace

NeighborSampler::NeighborSampler(const Graph& graph, std::vector<int64_t> fanouts, NeighborSamplerOptions options)
    : graph_(graph), fanouts_(std::move(fanouts)) {
  EW_REQUIRE(graph.defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(!fanouts_.empty(), kOp, ": fanouts must name at least one layer");
  for (size_t l = 0; l < fanouts_.size(); ++l) {
    EW_REQUIRE(fanouts_[l] >= 1 || fanouts_[l] == -1, kOp, ": fanouts[", l, "] (", fanouts_[l],
               ") must be >= 1, or -1 for every neighbour");
  }
  device_ = options.device.value_or(graph.device());
  rows_ = std::make_shared<const sampling::SortedRows>(sampling::sorted_rows(graph));
}

MiniBatch NeighborSampler::sample(const IndexTensor& seed_nodes, Generator& generator) const {
  const std::vector<int64_t> host = seed_nodes.to_host_vector();
  return sample(std::span<const int64_t>(host), generator);
}

MiniBatch NeighborSampler::sample(std::span<const int64_t> seed_nodes, Generator& generator) const {
  const std::vector<int32_t> seeds = sampling::checked_seeds(seed_nodes, graph_.num_nodes(), kOp);
  const int64_t L = static_cast<int64_t>(fanouts_.size());
  const uint64_t seed = generator.seed();
  std::vector<uint64_t> streams(static_cast<size_t>(L));
  for (auto& s : streams) s = generator.next_stream();  // innermost layer first

  const sampling::SortedRows& rows = *rows_;
  const int64_t* off = rows.offsets();
  const int32_t* src = rows.sources();

  std::vector<Block> blocks(static_cast<size_t>(L));
  std::vector<int32_t> frontier = seeds;
  for (int64_t l = L - 1; l >= 0; --l) {
    const int64_t fanout = fanouts_[l];
    const uint64_t stream = streams[L - 1 - l];
    const int64_t m = static_cast<int64_t>(frontier.size());
    // Per-destination sample sizes, then their offsets.
    std::vector<int64_t> offsets(static_cast<size_t>(m + 1), 0);
#pragma omp parallel for if (m > 4096)
    for (int64_t i = 0; i < m; ++i) {
      const int64_t d = off[frontier[i] + 1] - off[frontier[i]];
      offsets[i + 1] = fanout < 0 ? d : std::min(fanout, d);
    }
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    const int64_t E = offsets[m];
    std::vector<uint32_t> sampled(static_cast<size_t>(E));
    std::vector<int64_t> edge_ids(static_cast<size_t>(E));
    // One destination per iteration; each writes only its own output range (no
    // atomics), and its draws depend only on (seed, stream, node): any thread count
    // gives the same block. Dynamic schedule: a full-neighbourhood hub is long.
#pragma omp parallel if (m > 64)
    {
      std::vector<int64_t> chosen;
      std::vector<uint64_t> bitmap;
#pragma omp for schedule(dynamic, 32)
      for (int64_t i = 0; i < m; ++i) {
        const uint32_t v = static_cast<uint32_t>(frontier[i]);
        const int64_t row = off[v], d = off[v + 1] - off[v];
        const int64_t k = offsets[i + 1] - offsets[i];
        uint32_t* out_src = sampled.data() + offsets[i];
        int64_t* out_edge = edge_ids.data() + offsets[i];
        if (k == d) {  // the whole row (fanout -1 or a low-degree node): no draws
          for (int64_t s = 0; s < k; ++s) {
            out_src[s] = static_cast<uint32_t>(src[row + s]);
            out_edge[s] = rows.position(row + s);
          }
          continue;
        }
        if (static_cast<int64_t>(chosen.size()) < k) chosen.resize(static_cast<size_t>(k));
        sampling::choose_positions(seed, stream, v, d, k, chosen.data(), bitmap);
        for (int64_t s = 0; s < k; ++s) {
          const int64_t p = row + chosen[s];
          out_src[s] = static_cast<uint32_t>(src[p]);
          out_edge[s] = rows.position(p);
        }
      }
    }
    sampling::Relabelled ids = sampling::relabel(frontier, offsets, sampled);
    blocks[l] = sampling::make_block(ids, m, offsets, edge_ids, {}, device_);
    frontier = std::move(ids.src_nodes);
  }
  return sampling::assemble(std::move(blocks), seeds, device_);
}

}  // namespace edgewise::gnn
