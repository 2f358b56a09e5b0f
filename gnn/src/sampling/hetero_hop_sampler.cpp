// HeteroHopSampler: pyg-lib's hetero_neighbor_sample semantics (per hop, each edge type
// expands the frontier of its destination type; local ids per node type in discovery
// order) on the Philox draws HopSampler uses.
#include "edgewise/gnn/sampling/hetero_hop_sampler.hpp"

#include <algorithm>

#include "edgewise/kernels/common/check.hpp"
#include "sampling.hpp"
#include "sampling_core.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "HeteroHopSampler";
constexpr int64_t kMaxHops = 64;  // the hop is the low 6 bits of the Philox stream

}  // namespace

HeteroRelation HeteroRelation::from_coo(const std::string& name, int64_t src_type, int64_t dst_type,
                                        std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_src,
                                        int64_t num_dst) {
  EW_REQUIRE(src.size() == dst.size(), kOp, ": ", name, ": edge_index rows differ in length (", src.size(), " and ",
             dst.size(), ")");
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
  r.row.resize(static_cast<size_t>(E));
  r.edge_id.resize(static_cast<size_t>(E));
  std::vector<int64_t> next(r.colptr.begin(), r.colptr.end() - 1);
  for (int64_t k = 0; k < E; ++k) {
    const int64_t p = next[dst[k]]++;
    r.row[p] = src[k];
    r.edge_id[p] = k;
  }
  return r;
}

HeteroHopSampler::HeteroHopSampler(std::vector<int64_t> num_nodes, std::vector<HeteroRelation> relations,
                                   std::vector<std::vector<int64_t>> num_neighbors, bool replace)
    : num_nodes_(std::move(num_nodes)),
      relations_(std::move(relations)),
      num_neighbors_(std::move(num_neighbors)),
      replace_(replace) {
  const int64_t T = num_node_types(), R = num_edge_types();
  for (int64_t t = 0; t < T; ++t) {
    EW_REQUIRE(num_nodes_[t] >= 0 && num_nodes_[t] < (int64_t{1} << 31), kOp, ": num_nodes[", t, "] (",
               num_nodes_[t], ") must lie in [0, 2^31)");
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
    const int64_t E = static_cast<int64_t>(rel.row.size());
    EW_REQUIRE(static_cast<int64_t>(rel.colptr.size()) == num_dst + 1, kOp, ": relation ", r, ": colptr must hold ",
               num_dst + 1, " entries (got ", rel.colptr.size(), ")");
    EW_REQUIRE(static_cast<int64_t>(rel.edge_id.size()) == E, kOp, ": relation ", r, ": edge_id must hold ", E,
               " entries (got ", rel.edge_id.size(), ")");
    EW_REQUIRE(rel.colptr[0] == 0 && rel.colptr[num_dst] == E, kOp, ": relation ", r, ": colptr must run from 0 to ",
               E);
    for (int64_t v = 0; v < num_dst; ++v) {
      EW_REQUIRE(rel.colptr[v + 1] >= rel.colptr[v], kOp, ": relation ", r, ": colptr must be nondecreasing");
    }
    for (int64_t k = 0; k < E; ++k) {
      EW_REQUIRE(rel.row[k] >= 0 && rel.row[k] < num_src, kOp, ": relation ", r, ": row[", k, "] (", rel.row[k],
                 ") must lie in [0, ", num_src, ")");
    }
  }
  if (R == 0) num_hops_ = 1;
  EW_REQUIRE(num_hops_ >= 1 && num_hops_ <= kMaxHops, kOp, ": num_neighbors must name 1 to ", kMaxHops,
             " hops (got ", num_hops_, ")");
}

HeteroSampledSubgraph HeteroHopSampler::sample(const std::vector<std::span<const int64_t>>& seeds, uint64_t seed,
                                               uint64_t stream, HeteroHopSamplerScratch& scratch) const {
  const int64_t T = num_node_types(), R = num_edge_types();
  EW_REQUIRE(static_cast<int64_t>(seeds.size()) == T, kOp, ": seeds must hold one list per node type (", T, "; got ",
             seeds.size(), ")");
  for (int64_t t = 0; t < T; ++t) {
    const std::string name = "seeds[" + std::to_string(t) + "]";
    (void)sampling::checked_seeds(seeds[t], num_nodes_[t], kOp, name.c_str());
  }
  EW_REQUIRE(stream < (uint64_t{1} << 52) / static_cast<uint64_t>(std::max<int64_t>(R, 1)), kOp, ": stream (", stream,
             ") is too large for ", R, " edge types");

  HeteroSampledSubgraph out;
  out.node.resize(static_cast<size_t>(T));
  out.num_sampled_nodes.resize(static_cast<size_t>(T));
  out.row.resize(static_cast<size_t>(R));
  out.col.resize(static_cast<size_t>(R));
  out.edge.resize(static_cast<size_t>(R));
  out.num_sampled_edges.resize(static_cast<size_t>(R));
  scratch.local_of_.resize(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) {
    auto& local_of = scratch.local_of_[t];
    if (static_cast<int64_t>(local_of.size()) < num_nodes_[t]) local_of.assign(static_cast<size_t>(num_nodes_[t]), -1);
    out.node[t].assign(seeds[t].begin(), seeds[t].end());
    for (size_t i = 0; i < seeds[t].size(); ++i) local_of[seeds[t][i]] = static_cast<int32_t>(i);
    out.num_sampled_nodes[t].push_back(static_cast<int64_t>(seeds[t].size()));
  }

  // The frontier of each node type: the local ids [begin, end) the previous hop found.
  std::vector<int64_t> begin(static_cast<size_t>(T), 0), end(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) end[t] = static_cast<int64_t>(out.node[t].size());
  std::vector<int64_t>& picked = scratch.picked_;
  for (int64_t hop = 0; hop < num_hops_; ++hop) {
    for (int64_t r = 0; r < R; ++r) {
      const HeteroRelation& rel = relations_[r];
      const int64_t count = num_neighbors_[r][hop];
      const uint64_t hop_stream = (stream * static_cast<uint64_t>(R) + static_cast<uint64_t>(r)) * kMaxHops +
                                  static_cast<uint64_t>(hop);
      const std::vector<int64_t>& frontier = out.node[rel.dst_type];
      std::vector<int64_t>& sources = out.node[rel.src_type];
      std::vector<int32_t>& local_of = scratch.local_of_[rel.src_type];
      const int64_t edges_before = static_cast<int64_t>(out.row[r].size());
      for (int64_t i = begin[rel.dst_type]; i < end[rel.dst_type]; ++i) {
        const int64_t v = frontier[i];
        const int64_t first = rel.colptr[v], d = rel.colptr[v + 1] - first;
        const uint32_t node = static_cast<uint32_t>(i);
        picked.clear();
        if (d == 0 || count == 0) {
          continue;
        } else if (count < 0 || (!replace_ && count >= d)) {
          for (int64_t j = 0; j < d; ++j) picked.push_back(first + j);
        } else if (replace_) {
          PhiloxBlock block{};
          for (int64_t s = 0; s < count; ++s) {
            if ((s & 1) == 0) block = sampling::refresh_block(seed, hop_stream, node, static_cast<uint64_t>(s));
            picked.push_back(first + static_cast<int64_t>(sampling::draw_below(block, static_cast<int>(s & 1),
                                                                                static_cast<uint64_t>(d))));
          }
        } else {
          picked.resize(static_cast<size_t>(count));
          sampling::choose_positions(seed, hop_stream, node, d, count, picked.data(), scratch.bitmap_);
          for (int64_t& p : picked) p += first;
        }
        for (int64_t p : picked) {
          const int64_t u = rel.row[p];
          int32_t& slot = local_of[u];
          if (slot < 0) {
            slot = static_cast<int32_t>(sources.size());
            sources.push_back(u);
          }
          out.row[r].push_back(slot);
          out.col[r].push_back(i);
          out.edge[r].push_back(rel.edge_id[p]);
        }
      }
      out.num_sampled_edges[r].push_back(static_cast<int64_t>(out.row[r].size()) - edges_before);
    }
    for (int64_t t = 0; t < T; ++t) {
      begin[t] = end[t];
      end[t] = static_cast<int64_t>(out.node[t].size());
      out.num_sampled_nodes[t].push_back(end[t] - begin[t]);
    }
  }
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t v : out.node[t]) scratch.local_of_[t][v] = -1;
  }
  return out;
}

}  // namespace edgewise::gnn
