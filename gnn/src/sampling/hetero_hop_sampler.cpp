// HeteroHopSampler: pyg-lib's hetero_neighbor_sample semantics (per hop, each edge type
// expands the frontier of its destination type; local ids per node type in discovery
// order) on the Philox draws HopSampler uses.
#include "edgewise/gnn/sampling/hetero_hop_sampler.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "edgewise/kernels/common/check.hpp"
#include "local_ids.hpp"
#include "row_draw.hpp"
#include "sampling.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "HeteroHopSampler";
constexpr int64_t kMaxHops = 64;  // the hop is the low 6 bits of the Philox stream

// What relation rel's positions carry for draw_row.
sampling::RowData row_data_of(const HeteroRelation& rel, const HeteroHopSamplerOptions& options) {
  sampling::RowData data;
  data.row = rel.rows();
  data.weight = rel.edge_weight.empty() ? nullptr : rel.edge_weight.data();
  data.edge_time = rel.edge_time.empty() ? nullptr : rel.edge_time.data();
  const auto& node_time = options.node_time;
  if (data.edge_time == nullptr && !node_time.empty() && !node_time[rel.src_type].empty()) {
    data.node_time = node_time[rel.src_type].data();
  }
  data.strategy = options.temporal_strategy;
  return data;
}


// Induced: per edge type, every in-edge of every sampled destination whose source was
// sampled, destinations in local order and their edges in CSC order, so the edges into
// the nodes of hop group h follow those of group h - 1 (the last count also holds the
// edges into the last hop's new nodes), as HopSampler's induced sample.
void add_induced_edges(const std::vector<HeteroRelation>& relations, int64_t num_hops,
                       const std::vector<sampling::LocalIds>& ids, HeteroSampledSubgraph& out) {
  for (size_t r = 0; r < relations.size(); ++r) {
    const HeteroRelation& rel = relations[r];
    const std::vector<int64_t>& destinations = out.node[rel.dst_type];
    const std::vector<int64_t>& groups = out.num_sampled_nodes[rel.dst_type];
    const sampling::LocalIds& source_ids = ids[rel.src_type];
    const IdSpan sources = rel.rows(), edge_ids = rel.ids();
    int64_t group_end = 0;
    for (int64_t hop = 0; hop < num_hops; ++hop) {
      const int64_t group_begin = group_end;
      group_end += groups[hop] + (hop + 1 == num_hops ? groups[num_hops] : 0);
      const int64_t edges_before = static_cast<int64_t>(out.row[r].size());
      for (int64_t i = group_begin; i < group_end; ++i) {
        const int64_t v = destinations[i];
        for (int64_t k = rel.colptr[v]; k < rel.colptr[v + 1]; ++k) {
          const int32_t local = source_ids.find(sources[k]);
          if (local < 0) continue;
          out.row[r].push_back(local);
          out.col[r].push_back(i);
          out.edge[r].push_back(edge_ids[k]);
        }
      }
      out.num_sampled_edges[r].push_back(static_cast<int64_t>(out.row[r].size()) - edges_before);
    }
  }
}

}  // namespace

HeteroRelation HeteroRelation::from_coo(const std::string& name, int64_t src_type, int64_t dst_type,
                                        std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_src,
                                        int64_t num_dst, std::span<const double> weight,
                                        std::span<const int64_t> time) {
  EW_REQUIRE(src.size() == dst.size(), kOp, ": ", name, ": edge_index rows differ in length (", src.size(), " and ",
             dst.size(), ")");
  EW_REQUIRE(weight.empty() || weight.size() == src.size(), kOp, ": ", name, ": edge_weight must hold ", src.size(),
             " entries, one per edge (got ", weight.size(), ")");
  EW_REQUIRE(time.empty() || time.size() == src.size(), kOp, ": ", name, ": edge_time must hold ", src.size(),
             " entries, one per edge (got ", time.size(), ")");
  EW_REQUIRE(num_src >= 0 && num_dst >= 0, kOp, ": ", name, ": node counts must be >= 0 (got ", num_src, ", ",
             num_dst, ")");
  const int64_t E = static_cast<int64_t>(src.size());
  for (int64_t k = 0; k < E; ++k) {
    EW_REQUIRE(src[k] >= 0 && src[k] < num_src, kOp, ": ", name, ": edge_index[0][", k, "] (", src[k],
               ") must lie in [0, ", num_src, ")");
    EW_REQUIRE(dst[k] >= 0 && dst[k] < num_dst, kOp, ": ", name, ": edge_index[1][", k, "] (", dst[k],
               ") must lie in [0, ", num_dst, ")");
  }
  HeteroRelation r;
  r.src_type = src_type;
  r.dst_type = dst_type;
  // Counting sort by destination: stable, so each row keeps the input order.
  r.colptr.assign(static_cast<size_t>(num_dst) + 1, 0);
  for (int64_t k = 0; k < E; ++k) ++r.colptr[dst[k] + 1];
  for (int64_t v = 0; v < num_dst; ++v) r.colptr[v + 1] += r.colptr[v];
  if (!weight.empty()) r.edge_weight.resize(static_cast<size_t>(E));
  if (!time.empty()) r.edge_time.resize(static_cast<size_t>(E));
  // Ids in the width kept (CscGraph's rule), written directly.
  const auto fill = [&](auto& row, auto& edge_id) {
    using Id = typename std::remove_reference_t<decltype(row)>::value_type;
    row.resize(static_cast<size_t>(E));
    edge_id.resize(static_cast<size_t>(E));
    std::vector<int64_t> next(r.colptr.begin(), r.colptr.end() - 1);
    for (int64_t k = 0; k < E; ++k) {
      const int64_t p = next[dst[k]]++;
      row[p] = static_cast<Id>(src[k]);
      edge_id[p] = static_cast<Id>(k);
      if (!weight.empty()) r.edge_weight[p] = weight[k];
      if (!time.empty()) r.edge_time[p] = time[k];
    }
  };
  if (num_src <= INT32_MAX && E <= INT32_MAX) {
    fill(r.row32, r.edge_id32);
  } else {
    fill(r.row, r.edge_id);
  }
  return r;
}

void HeteroRelation::sort_rows_by_time(std::span<const int64_t> src_node_time) {
  const bool by_edge = !edge_time.empty();
  if (!by_edge && src_node_time.empty()) return;
  const IdSpan sources = rows();
  const auto time_of = [&](int64_t k) {
    return by_edge ? edge_time[k] : src_node_time[static_cast<size_t>(sources[static_cast<size_t>(k)])];
  };
  std::vector<int64_t> order;
  const auto permute = [&](auto& values, int64_t first) {
    if (values.empty()) return;
    std::vector<std::decay_t<decltype(values[0])>> copy(order.size());
    for (size_t j = 0; j < order.size(); ++j) copy[j] = values[static_cast<size_t>(order[j])];
    std::copy(copy.begin(), copy.end(), values.begin() + first);
  };
  for (size_t v = 0; v + 1 < colptr.size(); ++v) {
    const int64_t first = colptr[v], last = colptr[v + 1];
    order.resize(static_cast<size_t>(last - first));
    std::iota(order.begin(), order.end(), first);
    if (std::is_sorted(order.begin(), order.end(), [&](int64_t a, int64_t b) { return time_of(a) < time_of(b); })) {
      continue;
    }
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return time_of(a) < time_of(b); });
    permute(row, first);
    permute(edge_id, first);
    permute(row32, first);
    permute(edge_id32, first);
    permute(edge_weight, first);
    permute(edge_time, first);
  }
}

HeteroHopSampler::HeteroHopSampler(std::vector<int64_t> num_nodes, std::vector<HeteroRelation> relations,
                                   std::vector<std::vector<int64_t>> num_neighbors, HeteroHopSamplerOptions options)
    : num_nodes_(std::move(num_nodes)),
      relations_(std::move(relations)),
      num_neighbors_(std::move(num_neighbors)),
      options_(std::move(options)) {
  const int64_t T = num_node_types(), R = num_edge_types();
  for (int64_t t = 0; t < T; ++t) {
    EW_REQUIRE(num_nodes_[t] >= 0 && num_nodes_[t] < (int64_t{1} << 31), kOp, ": num_nodes[", t, "] (",
               num_nodes_[t], ") must lie in [0, 2^31)");
  }
  auto& node_time = options_.node_time;
  EW_REQUIRE(node_time.empty() || static_cast<int64_t>(node_time.size()) == T, kOp,
             ": node_time must hold one list per node type (", T, "; got ", node_time.size(), ")");
  for (size_t t = 0; t < node_time.size(); ++t) {
    EW_REQUIRE(node_time[t].empty() || static_cast<int64_t>(node_time[t].size()) == num_nodes_[t], kOp,
               ": node_time[", t, "] must hold ", num_nodes_[t], " entries, one per node (got ", node_time[t].size(),
               ")");
  }
  EW_REQUIRE(static_cast<int64_t>(num_neighbors_.size()) == R, kOp, ": num_neighbors must hold one list per edge type (",
             R, "; got ", num_neighbors_.size(), ")");
  for (int64_t r = 0; r < R; ++r) {
    const auto& counts = num_neighbors_[r];
    if (r == 0) num_hops_ = static_cast<int64_t>(counts.size());
    EW_REQUIRE(static_cast<int64_t>(counts.size()) == num_hops_, kOp, ": num_neighbors[", r, "] names ",
               counts.size(), " hops, num_neighbors[0] ", num_hops_, " (every edge type needs the same number)");
    for (size_t h = 0; h < counts.size(); ++h) {
      EW_REQUIRE(counts[h] >= -1, kOp, ": num_neighbors[", r, "][", h, "] (", counts[h],
                 ") must be >= 0, or -1 for all");
    }
    const HeteroRelation& rel = relations_[r];
    EW_REQUIRE(rel.src_type >= 0 && rel.src_type < T && rel.dst_type >= 0 && rel.dst_type < T, kOp, ": relation ", r,
               " joins node types ", rel.src_type, " -> ", rel.dst_type, "; there are ", T);
    const int64_t num_dst = num_nodes_[rel.dst_type], num_src = num_nodes_[rel.src_type];
    const IdSpan sources = rel.rows(), edge_ids = rel.ids();
    const int64_t E = static_cast<int64_t>(sources.size());
    EW_REQUIRE(static_cast<int64_t>(rel.colptr.size()) == num_dst + 1, kOp, ": relation ", r, ": colptr must hold ",
               num_dst + 1, " entries (got ", rel.colptr.size(), ")");
    EW_REQUIRE(static_cast<int64_t>(edge_ids.size()) == E, kOp, ": relation ", r, ": edge_id must hold ", E,
               " entries (got ", edge_ids.size(), ")");
    EW_REQUIRE(rel.colptr[0] == 0 && rel.colptr[num_dst] == E, kOp, ": relation ", r, ": colptr must run from 0 to ",
               E);
    for (int64_t v = 0; v < num_dst; ++v) {
      EW_REQUIRE(rel.colptr[v + 1] >= rel.colptr[v], kOp, ": relation ", r, ": colptr must be nondecreasing");
    }
    for (int64_t k = 0; k < E; ++k) {
      const int64_t u = sources[static_cast<size_t>(k)];
      EW_REQUIRE(u >= 0 && u < num_src, kOp, ": relation ", r, ": row[", k, "] (", u, ") must lie in [0, ", num_src,
                 ")");
    }
    EW_REQUIRE(rel.edge_weight.empty() || static_cast<int64_t>(rel.edge_weight.size()) == E, kOp, ": relation ", r,
               ": edge_weight must hold ", E, " entries (got ", rel.edge_weight.size(), ")");
    EW_REQUIRE(rel.edge_time.empty() || static_cast<int64_t>(rel.edge_time.size()) == E, kOp, ": relation ", r,
               ": edge_time must hold ", E, " entries (got ", rel.edge_time.size(), ")");
    for (int64_t k = 0; k < static_cast<int64_t>(rel.edge_weight.size()); ++k) {
      const double w = rel.edge_weight[k];
      EW_REQUIRE(w >= 0.0 && std::isfinite(w), kOp, ": relation ", r, ": edge_weight[", k, "] (", w,
                 ") must be finite and >= 0");
    }
    const sampling::RowData data = row_data_of(rel, options_);
    if (!data.temporal()) continue;
    temporal_ = true;
    if (options_.temporal_strategy == TemporalStrategy::Last) {
      const int64_t unsorted = sampling::row_unsorted_by_time(rel.colptr.data(), num_dst, data);
      EW_REQUIRE(unsorted < 0, kOp, ": relation ", r, ": temporal_strategy 'last' needs every node's in-edges sorted ",
                 "by time (node ", unsorted, "'s are not; HeteroRelation::sort_rows_by_time)");
    }
  }
  EW_REQUIRE(!temporal_ || options_.disjoint, kOp, ": temporal sampling needs disjoint subgraphs (disjoint=True)");
  EW_REQUIRE(options_.directed || !options_.disjoint, kOp,
             ": induced subgraphs (directed=False) of disjoint subgraphs are not supported");
  if (R == 0) num_hops_ = 1;
  EW_REQUIRE(num_hops_ >= 1 && num_hops_ <= kMaxHops, kOp, ": num_neighbors must name 1 to ", kMaxHops,
             " hops (got ", num_hops_, ")");
}

HeteroSampledSubgraph HeteroHopSampler::sample(const std::vector<std::span<const int64_t>>& seeds,
                                               const std::vector<std::span<const int64_t>>& seed_time, uint64_t seed,
                                               uint64_t stream, HeteroHopSamplerScratch& scratch) const {
  const int64_t T = num_node_types(), R = num_edge_types();
  const bool disjoint = options_.disjoint;
  EW_REQUIRE(static_cast<int64_t>(seeds.size()) == T, kOp, ": seeds must hold one list per node type (", T, "; got ",
             seeds.size(), ")");
  EW_REQUIRE(seed_time.empty() || static_cast<int64_t>(seed_time.size()) == T, kOp,
             ": seed_time must hold one list per node type (", T, "; got ", seed_time.size(), ")");
  std::vector<int64_t> seed_times;  // temporal: per seed, in type order
  for (int64_t t = 0; t < T; ++t) {
    const std::string name = "seeds[" + std::to_string(t) + "]";
    if (disjoint) {
      for (size_t i = 0; i < seeds[t].size(); ++i) {
        EW_REQUIRE(seeds[t][i] >= 0 && seeds[t][i] < num_nodes_[t], kOp, ": ", name, "[", i, "] (", seeds[t][i],
                   ") must lie in [0, ", num_nodes_[t], ")");
      }
    } else {
      (void)sampling::checked_seeds(seeds[t], num_nodes_[t], kOp, name.c_str());
    }
    const bool given = !seed_time.empty() && !seed_time[t].empty();
    EW_REQUIRE(!given || seed_time[t].size() == seeds[t].size(), kOp, ": seed_time[", t, "] must hold ",
               seeds[t].size(), " entries, one per seed (got ", seed_time[t].size(), ")");
    EW_REQUIRE(!given || temporal_, kOp, ": seed_time needs node or edge times (temporal sampling)");
    if (!temporal_ || seeds[t].empty()) continue;
    const bool has_node_time = !options_.node_time.empty() && !options_.node_time[t].empty();
    EW_REQUIRE(given || has_node_time, kOp, ": seeds[", t, "] need seed_time[", t,
               "] (their node type has no node times)");
    for (size_t i = 0; i < seeds[t].size(); ++i) {
      seed_times.push_back(given ? seed_time[t][i] : options_.node_time[t][static_cast<size_t>(seeds[t][i])]);
    }
  }
  EW_REQUIRE(stream < (uint64_t{1} << 52) / static_cast<uint64_t>(std::max<int64_t>(R, 1)), kOp, ": stream (", stream,
             ") is too large for ", R, " edge types");

  HeteroSampledSubgraph out;
  out.node.resize(static_cast<size_t>(T));
  if (disjoint) out.batch.resize(static_cast<size_t>(T));
  out.num_sampled_nodes.resize(static_cast<size_t>(T));
  out.row.resize(static_cast<size_t>(R));
  out.col.resize(static_cast<size_t>(R));
  out.edge.resize(static_cast<size_t>(R));
  out.num_sampled_edges.resize(static_cast<size_t>(R));
  scratch.local_of_.resize(static_cast<size_t>(T));
  scratch.hash_keys_.resize(static_cast<size_t>(T));
  scratch.hash_values_.resize(static_cast<size_t>(T));
  std::vector<sampling::LocalIds> ids;
  ids.reserve(static_cast<size_t>(T));
  int64_t seed_index = 0;  // disjoint: the batch id of the next seed
  for (int64_t t = 0; t < T; ++t) {
    ids.emplace_back(scratch.local_of_[t], scratch.hash_keys_[t], scratch.hash_values_[t], num_nodes_[t], disjoint);
    out.node[t].assign(seeds[t].begin(), seeds[t].end());
    for (size_t i = 0; i < seeds[t].size(); ++i) {
      ids[t].insert(disjoint ? seed_index : 0, seeds[t][i], static_cast<int32_t>(i));
      if (disjoint) out.batch[t].push_back(seed_index++);
    }
    out.num_sampled_nodes[t].push_back(static_cast<int64_t>(seeds[t].size()));
  }

  // The frontier of each node type: the local ids [begin, end) the previous hop found.
  std::vector<int64_t> begin(static_cast<size_t>(T), 0), end(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) end[t] = static_cast<int64_t>(out.node[t].size());
  std::vector<int64_t>& picked = scratch.picked_;
  sampling::RowDrawScratch draw_scratch{scratch.eligible_, scratch.order_, scratch.keys_, scratch.bitmap_};
  std::vector<sampling::RowData> data;
  for (const HeteroRelation& rel : relations_) data.push_back(row_data_of(rel, options_));
  for (int64_t hop = 0; hop < num_hops_; ++hop) {
    for (int64_t r = 0; r < R; ++r) {
      const HeteroRelation& rel = relations_[r];
      const int64_t count = num_neighbors_[r][hop];
      const uint64_t hop_stream = (stream * static_cast<uint64_t>(R) + static_cast<uint64_t>(r)) * kMaxHops +
                                  static_cast<uint64_t>(hop);
      const std::vector<int64_t>& frontier = out.node[rel.dst_type];
      std::vector<int64_t>& sources = out.node[rel.src_type];
      sampling::LocalIds& source_ids = ids[rel.src_type];
      const IdSpan relation_sources = rel.rows(), relation_ids = rel.ids();
      const bool filtered = data[r].temporal();
      const int64_t edges_before = static_cast<int64_t>(out.row[r].size());
      for (int64_t i = begin[rel.dst_type]; i < end[rel.dst_type]; ++i) {
        const int64_t v = frontier[i];
        const int64_t b = disjoint ? out.batch[rel.dst_type][i] : 0;
        if (count == 0 || rel.colptr[v + 1] == rel.colptr[v]) continue;
        sampling::draw_row(rel.colptr[v], rel.colptr[v + 1], data[r], filtered ? seed_times[b] : 0, count,
                           options_.replace, seed, hop_stream, static_cast<uint32_t>(i), draw_scratch, picked);
        for (int64_t p : picked) {
          const int64_t u = relation_sources[p];
          const auto [local, inserted] = source_ids.insert(b, u, static_cast<int32_t>(sources.size()));
          if (inserted) {
            sources.push_back(u);
            if (disjoint) out.batch[rel.src_type].push_back(b);
          }
          if (options_.directed) {
            out.row[r].push_back(local);
            out.col[r].push_back(i);
            out.edge[r].push_back(relation_ids[p]);
          }
        }
      }
      if (options_.directed) out.num_sampled_edges[r].push_back(static_cast<int64_t>(out.row[r].size()) - edges_before);
    }
    for (int64_t t = 0; t < T; ++t) {
      begin[t] = end[t];
      end[t] = static_cast<int64_t>(out.node[t].size());
      out.num_sampled_nodes[t].push_back(end[t] - begin[t]);
    }
  }
  if (!options_.directed) add_induced_edges(relations_, num_hops_, ids, out);
  for (int64_t t = 0; t < T; ++t) ids[t].clear(out.node[t]);
  return out;
}

}  // namespace edgewise::gnn
