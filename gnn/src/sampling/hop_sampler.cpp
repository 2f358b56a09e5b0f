// HopSampler: pyg-lib's neighbor_sample semantics (hops from the seeds, local ids in
// discovery order) on Philox draws, so a sample does not depend on the thread.
#include "edgewise/gnn/sampling/hop_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "local_ids.hpp"
#include "row_draw.hpp"
#include "sampling.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "HopSampler";
constexpr size_t kMaxHops = 64;  // the hop is the low 6 bits of the Philox stream
// How far ahead the random reads are requested: colptr by frontier node, row entries
// and id-table slots by sampled edge (a DRAM latency's worth of each loop's work).
constexpr int64_t kColptrAhead = 16;
constexpr int64_t kRowAhead = 8;
// Frontier nodes between two reads of the scratch's cancel flag (a relaxed load).
constexpr int64_t kCancelCheckEvery = 4096;

using sampling::LocalIds;

sampling::RowData row_data_of(const CscView& graph, TemporalStrategy strategy) {
  sampling::RowData data;
  data.row = graph.row;
  data.weight = graph.edge_weight.empty() ? nullptr : graph.edge_weight.data();
  data.edge_time = graph.edge_time.empty() ? nullptr : graph.edge_time.data();
  data.node_time = graph.edge_time.empty() && !graph.node_time.empty() ? graph.node_time.data() : nullptr;
  data.strategy = strategy;
  return data;
}

}  // namespace

TemporalStrategy parse_temporal_strategy(const std::string& name) {
  if (name == "uniform") return TemporalStrategy::Uniform;
  if (name == "last") return TemporalStrategy::Last;
  EW_REQUIRE(false, "temporal_strategy '", name, "' must be 'uniform' or 'last'");
  return TemporalStrategy::Uniform;
}

HopSampler::HopSampler(CscView graph, HopSamplerOptions options) : graph_(graph), options_(std::move(options)) {
  const auto& counts = options_.num_neighbors;
  EW_REQUIRE(!counts.empty(), kOp, ": num_neighbors must name at least one hop");
  EW_REQUIRE(counts.size() <= kMaxHops, kOp, ": num_neighbors names ", counts.size(), " hops; at most ", kMaxHops);
  for (size_t h = 0; h < counts.size(); ++h) {
    EW_REQUIRE(counts[h] >= -1, kOp, ": num_neighbors[", h, "] (", counts[h], ") must be >= 0, or -1 for all");
  }
  EW_REQUIRE(!graph_.colptr.empty(), kOp, ": colptr must hold num_nodes + 1 entries (got none)");
  const int64_t N = graph_.num_nodes(), E = graph_.num_edges();
  EW_REQUIRE(N < (int64_t{1} << 31), kOp, ": at most 2^31 - 1 nodes (got ", N, ")");
  EW_REQUIRE(graph_.colptr[0] == 0 && graph_.colptr[N] == E, kOp, ": colptr must run from 0 to the edge count ", E,
             " (got ", graph_.colptr[0], " .. ", graph_.colptr[N], ")");
  const int64_t* colptr = graph_.colptr.data();
  const IdSpan& row = graph_.row;
  int64_t bad_colptr = -1, bad_row = -1;
#pragma omp parallel for reduction(max : bad_colptr) if (N > (1 << 16))
  for (int64_t v = 0; v < N; ++v) {
    if (colptr[v + 1] < colptr[v]) bad_colptr = std::max(bad_colptr, v);
  }
  EW_REQUIRE(bad_colptr < 0, kOp, ": colptr must be nondecreasing (colptr[", bad_colptr + 1, "] < colptr[",
             bad_colptr, "])");
  row.visit([&](const auto* ids) {
#pragma omp parallel for reduction(max : bad_row) if (E > (1 << 16))
    for (int64_t k = 0; k < E; ++k) {
      if (ids[k] < 0 || ids[k] >= N) bad_row = std::max(bad_row, k);
    }
  });
  EW_REQUIRE(bad_row < 0, kOp, ": row[", bad_row, "] (", bad_row >= 0 ? row[bad_row] : 0, ") must lie in [0, ", N,
             ")");
  const auto check_length = [&](size_t got, int64_t want, const char* name) {
    EW_REQUIRE(got == 0 || static_cast<int64_t>(got) == want, kOp, ": ", name, " must hold ", want,
               " entries (got ", got, ")");
  };
  check_length(graph_.edge_id.size(), E, "edge_id");
  check_length(graph_.edge_weight.size(), E, "edge_weight");
  check_length(graph_.edge_time.size(), E, "edge_time");
  check_length(graph_.node_time.size(), N, "node_time");
  if (!graph_.edge_weight.empty()) {
    const double* w = graph_.edge_weight.data();
    int64_t bad = -1;
#pragma omp parallel for reduction(max : bad) if (E > (1 << 16))
    for (int64_t k = 0; k < E; ++k) {
      if (!(w[k] >= 0.0) || !std::isfinite(w[k])) bad = std::max(bad, k);
    }
    EW_REQUIRE(bad < 0, kOp, ": edge_weight[", bad, "] (", bad >= 0 ? w[bad] : 0.0, ") must be finite and >= 0");
  }
  if (graph_.temporal()) {
    EW_REQUIRE(options_.disjoint, kOp, ": temporal sampling needs disjoint subgraphs (disjoint=True)");
  }
  EW_REQUIRE(options_.directed || !options_.disjoint, kOp,
             ": induced subgraphs (directed=False) of disjoint subgraphs are not supported");
  if (graph_.temporal() && options_.temporal_strategy == TemporalStrategy::Last) {
    // Last takes the newest eligible positions of a row: a suffix of its eligible
    // prefix, which needs the row sorted by time.
    const bool by_edge = !graph_.edge_time.empty();
    const int64_t unsorted = sampling::row_unsorted_by_time(colptr, N, row_data_of(graph_, options_.temporal_strategy));
    EW_REQUIRE(unsorted < 0, kOp, ": temporal_strategy 'last' needs every node's in-edges sorted by ",
               by_edge ? "edge_time" : "node_time", " (node ", unsorted, "'s are not)");
  }
}

void HopSampler::check_seeds(std::span<const int64_t> seeds, std::span<const int64_t> seed_time) const {
  const int64_t N = graph_.num_nodes(), B = static_cast<int64_t>(seeds.size());
  if (options_.disjoint) {
    for (int64_t i = 0; i < B; ++i) {
      EW_REQUIRE(seeds[i] >= 0 && seeds[i] < N, kOp, ": seeds[", i, "] (", seeds[i], ") must lie in [0, ", N, ")");
    }
  } else {
    (void)sampling::checked_seeds(seeds, N, kOp, "seeds");
  }
  EW_REQUIRE(seed_time.empty() || static_cast<int64_t>(seed_time.size()) == B, kOp, ": seed_time must hold ", B,
             " entries, one per seed (got ", seed_time.size(), ")");
  EW_REQUIRE(seed_time.empty() || graph_.temporal(), kOp,
             ": seed_time needs node_time or edge_time (temporal sampling)");
  EW_REQUIRE(!graph_.temporal() || !seed_time.empty() || !graph_.node_time.empty(), kOp,
             ": sampling by edge_time needs seed_time");
}

SampledSubgraph HopSampler::sample(std::span<const int64_t> seeds, std::span<const int64_t> seed_time, uint64_t seed,
                                   uint64_t stream, HopSamplerScratch& scratch) const {
  check_seeds(seeds, seed_time);
  EW_REQUIRE(stream < (uint64_t{1} << 58), kOp, ": stream (", stream, ") must be below 2^58");
  const bool disjoint = options_.disjoint, temporal = graph_.temporal();
  const int64_t B = static_cast<int64_t>(seeds.size());
  const int64_t* colptr = graph_.colptr.data();
  const IdSpan& row = graph_.row;
  const sampling::RowData data = row_data_of(graph_, options_.temporal_strategy);
  const auto edge_id = [&](int64_t k) { return graph_.edge_id.empty() ? k : graph_.edge_id[k]; };

  SampledSubgraph out;
  out.node.assign(seeds.begin(), seeds.end());
  if (disjoint) {
    out.batch.resize(static_cast<size_t>(B));
    for (int64_t i = 0; i < B; ++i) out.batch[i] = i;
  }
  std::vector<int64_t> seed_times;
  if (temporal) {
    seed_times.resize(static_cast<size_t>(B));
    for (int64_t i = 0; i < B; ++i) seed_times[i] = seed_time.empty() ? graph_.node_time[seeds[i]] : seed_time[i];
  }
  LocalIds ids(scratch.local_of_, scratch.hash_keys_, scratch.hash_values_, graph_.num_nodes(), disjoint);
  for (int64_t i = 0; i < B; ++i) ids.insert(disjoint ? i : 0, seeds[i], static_cast<int32_t>(i));
  // Leaves the scratch as a finished call does (the id table empty), then throws.
  const auto stop_if_cancelled = [&] {
    if (!scratch.cancelled()) return;
    ids.clear(out.node);
    throw SamplingCancelled{};
  };
  out.num_sampled_nodes.push_back(B);

  std::vector<int64_t>& picked = scratch.positions_;  // CSC positions chosen for one destination
  std::vector<int64_t>& hop_positions = scratch.hop_positions_;
  std::vector<int64_t>& hop_offsets = scratch.hop_offsets_;
  std::vector<int64_t>& hop_sources = scratch.hop_sources_;
  sampling::RowDrawScratch draw_scratch{scratch.eligible_, scratch.order_, scratch.keys_, scratch.bitmap_};
  int64_t begin = 0, end = B;
  for (size_t hop = 0; hop < options_.num_neighbors.size(); ++hop) {
    const int64_t count = options_.num_neighbors[hop];
    const uint64_t hop_stream = stream * kMaxHops + hop;
    const int64_t edges_before = static_cast<int64_t>(out.row.size());
    // First the positions each frontier node draws (hop_offsets[i - begin] ..), from
    // colptr (and, temporal or weighted, the row's times or weights) alone.
    hop_positions.clear();
    hop_offsets.assign(1, 0);
    for (int64_t i = begin; i < end; ++i) {
      if ((i - begin) % kCancelCheckEvery == 0) stop_if_cancelled();
      // Each frontier node's colptr entry is a random read: requested ahead.
      if (i + kColptrAhead < end) __builtin_prefetch(colptr + out.node[i + kColptrAhead]);
      const int64_t v = out.node[i];
      const int64_t b = disjoint ? out.batch[i] : 0;
      sampling::draw_row(colptr[v], colptr[v + 1], data, temporal ? seed_times[b] : 0, count, options_.replace, seed,
                         hop_stream, static_cast<uint32_t>(i), draw_scratch, picked);
      hop_positions.insert(hop_positions.end(), picked.begin(), picked.end());
      hop_offsets.push_back(static_cast<int64_t>(hop_positions.size()));
    }
    // The sources of the chosen positions, then their local ids: two loops of
    // independent random reads (row, then the id table), which the CPU overlaps; done
    // per destination they would be cache misses in a chain.
    const int64_t P = static_cast<int64_t>(hop_positions.size());
    hop_sources.resize(static_cast<size_t>(P));
    row.visit([&](const auto* sources) {
      for (int64_t j = 0; j < P; ++j) {
        if (j + kRowAhead < P) __builtin_prefetch(sources + hop_positions[j + kRowAhead]);
        hop_sources[j] = sources[hop_positions[j]];
      }
    });
    for (int64_t i = begin; i < end; ++i) {
      if ((i - begin) % kCancelCheckEvery == 0) stop_if_cancelled();
      const int64_t b = disjoint ? out.batch[i] : 0;
      for (int64_t j = hop_offsets[i - begin]; j < hop_offsets[i - begin + 1]; ++j) {
        if (!disjoint && j + kRowAhead < P) ids.prefetch(hop_sources[j + kRowAhead]);
        const int64_t u = hop_sources[j];
        const auto [local, inserted] = ids.insert(b, u, static_cast<int32_t>(out.node.size()));
        if (inserted) {
          out.node.push_back(u);
          if (disjoint) out.batch.push_back(b);
        }
        if (options_.directed) {
          out.row.push_back(local);
          out.col.push_back(i);
          out.edge.push_back(hop_positions[j]);  // the CSC position; edge ids are looked up at the end
        }
      }
    }
    out.num_sampled_nodes.push_back(static_cast<int64_t>(out.node.size()) - end);
    if (options_.directed) out.num_sampled_edges.push_back(static_cast<int64_t>(out.row.size()) - edges_before);
    begin = end;
    end = static_cast<int64_t>(out.node.size());
  }

  if (!options_.directed) {
    // Induced: every in-edge of every sampled node whose source was sampled, grouped
    // by destination, so the edges into the nodes of group h follow those of group
    // h - 1 (the last count also holds those into the last hop's new nodes).
    const size_t hops = options_.num_neighbors.size();
    int64_t hop_end = 0;
    for (size_t hop = 0; hop < hops; ++hop) {
      const int64_t hop_begin = hop_end;
      hop_end += out.num_sampled_nodes[hop] + (hop + 1 == hops ? out.num_sampled_nodes[hops] : 0);
      const int64_t edges_before = static_cast<int64_t>(out.row.size());
      for (int64_t i = hop_begin; i < hop_end; ++i) {
        const int64_t v = out.node[i];
        for (int64_t k = colptr[v]; k < colptr[v + 1]; ++k) {
          const int32_t local = ids.find(row[k]);
          if (local < 0) continue;
          out.row.push_back(local);
          out.col.push_back(i);
          out.edge.push_back(edge_id(k));
        }
      }
      out.num_sampled_edges.push_back(static_cast<int64_t>(out.row.size()) - edges_before);
    }
  }
  if (options_.directed && !graph_.edge_id.empty()) {
    // Positions -> edge ids in one pass of independent loads, which the CPU overlaps
    // (inside the sampling loop each would be a cache miss on the critical path).
    const int64_t m = static_cast<int64_t>(out.edge.size());
    int64_t* e = out.edge.data();
    graph_.edge_id.visit([&](const auto* ids_of) {
      for (int64_t j = 0; j < m; ++j) {
        if (j + kRowAhead < m) __builtin_prefetch(ids_of + e[j + kRowAhead]);
        e[j] = ids_of[e[j]];
      }
    });
  }
  ids.clear(out.node);
  return out;
}

}  // namespace edgewise::gnn
