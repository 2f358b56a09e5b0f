// Shared sampler pieces: seed checks, relabelling (sort + unique + galloping search),
// block and minibatch assembly.
#include "sampling.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/galloping_search.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "sampling_core.hpp"

namespace edgewise::gnn::sampling {

SortedRows sorted_rows(const Graph& graph) {
  SortedRows rows;
  rows.host = graph.device().is_cpu() ? graph : graph.to(Device::cpu());
  const int64_t N = rows.host.num_nodes(), E = rows.host.num_edges();
  const int64_t* off = rows.host.offsets().data();
  const int32_t* src = rows.host.sources().data();
  bool sorted = true;
#pragma omp parallel for reduction(&& : sorted) if (E > (1 << 16))
  for (int64_t v = 0; v < N; ++v) {
    for (int64_t k = off[v] + 1; k < off[v + 1]; ++k) sorted = sorted && src[k - 1] <= src[k];
  }
  if (sorted) return rows;
  rows.own_positions.resize(static_cast<size_t>(E));
  rows.own_sources.resize(static_cast<size_t>(E));
  std::iota(rows.own_positions.begin(), rows.own_positions.end(), int64_t{0});
  int64_t* pos = rows.own_positions.data();
  int32_t* out = rows.own_sources.data();
#pragma omp parallel for schedule(dynamic, 256) if (E > (1 << 16))
  for (int64_t v = 0; v < N; ++v) {
    std::stable_sort(pos + off[v], pos + off[v + 1], [src](int64_t a, int64_t b) { return src[a] < src[b]; });
    for (int64_t k = off[v]; k < off[v + 1]; ++k) out[k] = src[pos[k]];
  }
  return rows;
}

std::vector<int32_t> checked_seeds(std::span<const int64_t> seeds, int64_t num_nodes, const char* op,
                                   const char* name) {
  const int64_t B = static_cast<int64_t>(seeds.size());
  for (int64_t i = 0; i < B; ++i) {
    EW_REQUIRE(seeds[i] >= 0 && seeds[i] < num_nodes, op, ": ", name, "[", i, "] (", seeds[i], ") must lie in [0, ",
               num_nodes, ")");
  }
  // Distinct: sort (id, position) and look at neighbours; report the earliest repeat.
  std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(B));
  for (int64_t i = 0; i < B; ++i) order[i] = {seeds[i], i};
  std::sort(order.begin(), order.end());
  int64_t repeat = -1, first = -1;
  for (int64_t k = 1; k < B; ++k) {
    if (order[k].first == order[k - 1].first && (repeat < 0 || order[k].second < repeat)) {
      repeat = order[k].second;
      // The first occurrence of this id: the start of its run in `order`.
      int64_t s = k - 1;
      while (s > 0 && order[s - 1].first == order[k].first) --s;
      first = order[s].second;
    }
  }
  EW_REQUIRE(repeat < 0, op, ": ", name, "[", repeat, "] (", repeat >= 0 ? seeds[repeat] : 0, ") repeats ", name,
             "[", first, "]; seeds must be distinct");
  return std::vector<int32_t>(seeds.begin(), seeds.end());
}

Relabelled relabel(std::span<const int32_t> dst, std::span<const int64_t> offsets, std::span<const uint32_t> sampled) {
  const int64_t m = static_cast<int64_t>(dst.size());
  const int64_t E = static_cast<int64_t>(sampled.size());
  const int64_t n = m + E;
  Context& ctx = trusted_context(Device::cpu());  // our own arrays: shapes are right by construction

  // Sort the destinations and every sampled source together. The sort is stable and
  // the destinations come first, so the first element of each run of equal ids is the
  // destination position of that id when it is a destination.
  std::vector<uint32_t> keys(static_cast<size_t>(n));
  std::copy(dst.begin(), dst.end(), keys.begin());
  std::copy(sampled.begin(), sampled.end(), keys.begin() + m);
  std::vector<uint32_t> sorted(static_cast<size_t>(n));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  sort_by_key<uint32_t>(VectorView<const uint32_t>(keys.data(), n), VectorView<uint32_t>(sorted.data(), n),
                        VectorView<int64_t>(perm.data(), n), ctx);
  std::vector<uint32_t> unique_ids(static_cast<size_t>(n));
  std::vector<int64_t> lengths(static_cast<size_t>(n));
  const int64_t R = run_length_encode<uint32_t>(VectorView<const uint32_t>(sorted.data(), n),
                                                VectorView<uint32_t>(unique_ids.data(), n),
                                                VectorView<int64_t>(lengths.data(), n), ctx);

  // Local id of each unique id: its destination position, else the next free slot
  // after the destinations (so the non-destination sources come in ascending id).
  Relabelled out;
  out.src_nodes.resize(static_cast<size_t>(R));
  std::vector<int32_t> local_of_run(static_cast<size_t>(R));
  int64_t start = 0, next_new = m;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t first = perm[start];
    const int64_t local = first < m ? first : next_new++;
    local_of_run[r] = static_cast<int32_t>(local);
    out.src_nodes[local] = static_cast<int32_t>(unique_ids[r]);
    start += lengths[r];
  }

  // One segment per destination: its (ascending) sampled sources are the queries, the
  // sorted unique ids the values, so each query gallops from the previous answer.
  std::vector<int64_t> segments(static_cast<size_t>(4 * m));
  for (int64_t i = 0; i < m; ++i) {
    segments[4 * i + 0] = 0;
    segments[4 * i + 1] = R;
    segments[4 * i + 2] = offsets[i];
    segments[4 * i + 3] = offsets[i + 1] - offsets[i];
  }
  std::vector<int64_t> positions(static_cast<size_t>(E));
  uint32_t validation = 0;
  galloping_search<uint32_t>(VectorView<const uint32_t>(unique_ids.data(), R), {},
                             VectorView<const uint32_t>(sampled.data(), E),
                             MatrixView<const int64_t>(segments.data(), m, 4),
                             VectorView<int64_t>(positions.data(), E), VectorView<uint32_t>(&validation, 1),
                             GallopingSearchOptions{}, ctx);
  if (validation != 0) {
    throw std::logic_error("sampler relabel: galloping_search raised validation bits " +
                           std::to_string(validation) + " (sampled sources must ascend within each destination)");
  }
  out.local_sources.resize(static_cast<size_t>(E));
#pragma omp parallel for if (E > (1 << 15))
  for (int64_t e = 0; e < E; ++e) out.local_sources[e] = local_of_run[positions[e]];
  return out;
}

namespace {

// Up to this many draws per node the "already chosen?" test scans the chosen list;
// above it a bitmap over the row is cheaper.
constexpr int64_t kLinearScanDraws = 64;

}  // namespace

void choose_positions(uint64_t seed, uint64_t stream, uint32_t node, int64_t d, int64_t k, int64_t* out,
                      std::vector<uint64_t>& bitmap) {
  const int64_t first = d - k;
  const bool use_bitmap = k > kLinearScanDraws;
  if (use_bitmap && static_cast<int64_t>(bitmap.size()) * 64 < d) bitmap.resize(static_cast<size_t>((d + 63) / 64));
  PhiloxBlock block{};
  for (int64_t s = 0; s < k; ++s) {
    if ((s & 1) == 0) block = refresh_block(seed, stream, node, static_cast<uint64_t>(s));
    const int64_t j = first + s;
    int64_t t = static_cast<int64_t>(floyd_draw(block, static_cast<uint64_t>(s), static_cast<uint64_t>(j)));
    bool taken;
    if (use_bitmap) {
      taken = (bitmap[t >> 6] >> (t & 63)) & 1;
    } else {
      taken = std::find(out, out + s, t) != out + s;
    }
    if (taken) t = j;
    out[s] = t;
    if (use_bitmap) bitmap[t >> 6] |= uint64_t{1} << (t & 63);
  }
  if (use_bitmap) {
    for (int64_t s = 0; s < k; ++s) bitmap[out[s] >> 6] = 0;
    std::sort(out, out + k);
  } else {
    // Insertion sort: k is small.
    for (int64_t s = 1; s < k; ++s) {
      const int64_t x = out[s];
      int64_t i = s;
      for (; i > 0 && out[i - 1] > x; --i) out[i] = out[i - 1];
      out[i] = x;
    }
  }
}

IndexTensor index_tensor(std::span<const int32_t> ids, Device device) {
  std::vector<int64_t> wide(ids.begin(), ids.end());
  return IndexTensor::from_host(wide, static_cast<int64_t>(wide.size()), 1, device);
}

Block make_block(const Relabelled& ids, int64_t num_dst, std::span<const int64_t> dst_offsets,
                 std::span<const int64_t> edge_ids, std::span<const float> weights, Device device) {
  const int64_t num_src = static_cast<int64_t>(ids.src_nodes.size());
  const int64_t E = static_cast<int64_t>(ids.local_sources.size());
  std::vector<int64_t> offsets(static_cast<size_t>(num_src + 1), E);
  std::copy(dst_offsets.begin(), dst_offsets.begin() + num_dst + 1, offsets.begin());
  Block block;
  block.graph = Graph::from_csr(offsets, ids.local_sources, weights, device);
  block.num_src = num_src;
  block.num_dst = num_dst;
  block.src_nodes = index_tensor(ids.src_nodes, device);
  block.edge_ids = IndexTensor::from_host(edge_ids, E, 1, device);
  return block;
}

MiniBatch assemble(std::vector<Block> blocks, std::span<const int32_t> seeds, Device device) {
  MiniBatch batch;
  batch.blocks = std::move(blocks);
  batch.seed_nodes = index_tensor(seeds, device);
  batch.input_nodes = batch.blocks.empty() ? batch.seed_nodes : batch.blocks.front().src_nodes;
  return batch;
}

}  // namespace edgewise::gnn::sampling
