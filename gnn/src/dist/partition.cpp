// METIS k-way partitioning of a node-classification graph (edge-cut objective).
#include <metis.h>

#include <algorithm>
#include <numeric>

#include "edgewise/gnn/dist/partition.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::dist {

namespace {

double max_over_mean(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  const double total = static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0}));
  if (total == 0) return 1;
  return static_cast<double>(*std::max_element(v.begin(), v.end())) / (total / static_cast<double>(v.size()));
}

// The undirected simple graph METIS wants: both directions of every edge, no self
// loops, no duplicates, as CSR.
void undirected_csr(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t n, std::vector<idx_t>& xadj,
                    std::vector<idx_t>& adjncy) {
  std::vector<std::vector<idx_t>> adj(static_cast<size_t>(n));
  for (size_t e = 0; e < src.size(); ++e) {
    if (src[e] == dst[e]) continue;
    adj[static_cast<size_t>(src[e])].push_back(static_cast<idx_t>(dst[e]));
    adj[static_cast<size_t>(dst[e])].push_back(static_cast<idx_t>(src[e]));
  }
  xadj.assign(static_cast<size_t>(n) + 1, 0);
  adjncy.clear();
  for (int64_t v = 0; v < n; ++v) {
    auto& a = adj[static_cast<size_t>(v)];
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    adjncy.insert(adjncy.end(), a.begin(), a.end());
    xadj[static_cast<size_t>(v) + 1] = static_cast<idx_t>(adjncy.size());
    std::vector<idx_t>().swap(a);
  }
}

}  // namespace

double Partition::node_balance() const { return max_over_mean(part_nodes); }
double Partition::edge_balance() const { return max_over_mean(part_edges); }

Partition partition(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t n, int64_t k,
                    const PartitionOptions& options) {
  EW_REQUIRE(src.size() == dst.size(), "partition: ", src.size(), " sources but ", dst.size(), " destinations");
  EW_REQUIRE(k >= 1, "partition: k (", k, ") must be >= 1");
  EW_REQUIRE(k <= n, "partition: k (", k, ") must not exceed the number of nodes (", n, ")");
  EW_REQUIRE(n < (int64_t{1} << 31) && static_cast<int64_t>(src.size()) * 2 < (int64_t{1} << 31),
             "partition: the graph (", n, " nodes, ", src.size(), " edges) exceeds METIS's 32-bit indices");
  EW_REQUIRE(options.imbalance > 1.0, "partition: imbalance (", options.imbalance, ") must be > 1");
  for (size_t e = 0; e < src.size(); ++e) {
    EW_REQUIRE(src[e] >= 0 && src[e] < n && dst[e] >= 0 && dst[e] < n, "partition: edge ", e, " (", src[e], " -> ",
               dst[e], ") has an id outside [0, ", n, ")");
  }
  for (size_t i = 0; i < options.balance_nodes.size(); ++i) {
    const int64_t v = options.balance_nodes[i];
    EW_REQUIRE(v >= 0 && v < n, "partition: balance_nodes[", i, "] (", v, ") must lie in [0, ", n, ")");
  }

  Partition p;
  p.num_parts = k;
  p.part.assign(static_cast<size_t>(n), 0);
  std::vector<idx_t> xadj, adjncy;
  undirected_csr(src, dst, n, xadj, adjncy);
  if (k > 1 && adjncy.empty()) {
    // No edges: nothing to cut; contiguous blocks balance the nodes.
    for (int64_t v = 0; v < n; ++v) p.part[static_cast<size_t>(v)] = static_cast<int32_t>(v * k / n);
  } else if (k > 1) {
    // Vertex weights: one column per balance constraint (nodes, then edges, then the
    // given nodes), each balanced by METIS within `imbalance`.
    std::vector<int64_t> in_degree(static_cast<size_t>(n), 0);
    for (int64_t d : dst) ++in_degree[static_cast<size_t>(d)];
    std::vector<char> marked(static_cast<size_t>(n), 0);
    for (int64_t v : options.balance_nodes) marked[static_cast<size_t>(v)] = 1;
    const bool by_marked = !options.balance_nodes.empty();
    idx_t ncon = 1 + (options.balance_edges ? 1 : 0) + (by_marked ? 1 : 0);
    std::vector<idx_t> vwgt;
    vwgt.reserve(static_cast<size_t>(n * ncon));
    for (int64_t v = 0; v < n; ++v) {
      vwgt.push_back(1);
      if (options.balance_edges) vwgt.push_back(static_cast<idx_t>(in_degree[static_cast<size_t>(v)]));
      if (by_marked) vwgt.push_back(marked[static_cast<size_t>(v)]);
    }
    idx_t metis_options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(metis_options);
    metis_options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
    metis_options[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed & 0x7fffffff);
    metis_options[METIS_OPTION_NUMBERING] = 0;
    std::vector<real_t> ubvec(static_cast<size_t>(ncon), static_cast<real_t>(options.imbalance));
    idx_t nvtxs = static_cast<idx_t>(n), nparts = static_cast<idx_t>(k), objval = 0;
    std::vector<idx_t> where(static_cast<size_t>(n));
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, nullptr,
                                           &nparts, nullptr, ubvec.data(), metis_options, &objval, where.data());
    EW_REQUIRE(status == METIS_OK, "partition: METIS_PartGraphKway failed (status ", status, ") for k = ", k);
    for (int64_t v = 0; v < n; ++v) p.part[static_cast<size_t>(v)] = static_cast<int32_t>(where[static_cast<size_t>(v)]);
  }
  p.part_nodes.assign(static_cast<size_t>(k), 0);
  p.part_edges.assign(static_cast<size_t>(k), 0);
  for (int64_t v = 0; v < n; ++v) ++p.part_nodes[static_cast<size_t>(p.part[static_cast<size_t>(v)])];
  for (size_t e = 0; e < src.size(); ++e) {
    const int32_t pd = p.part[static_cast<size_t>(dst[e])];
    ++p.part_edges[static_cast<size_t>(pd)];
    if (p.part[static_cast<size_t>(src[e])] != pd) ++p.edge_cut;
  }
  return p;
}

Partition partition(const Dataset& dataset, int64_t k, const PartitionOptions& options) {
  return partition(dataset.src(), dataset.dst(), dataset.num_nodes, k, options);
}

}  // namespace edgewise::gnn::dist
