// Node orderings (degree, reverse Cuthill–McKee) and applying a permutation to a
// graph, a dataset and per-node results (see reorder.hpp).
#include "edgewise/gnn/graph/reorder.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "reorder";

void check_edges(int64_t num_nodes, std::span<const int64_t> src, std::span<const int64_t> dst) {
  EW_REQUIRE(num_nodes >= 0 && num_nodes < (int64_t{1} << 31), kOp, ": num_nodes (", num_nodes,
             ") must lie in [0, 2^31)");
  EW_REQUIRE(src.size() == dst.size(), kOp, ": src has ", src.size(), " edges but dst has ", dst.size());
  for (size_t e = 0; e < src.size(); ++e) {
    EW_REQUIRE(src[e] >= 0 && src[e] < num_nodes, kOp, ": src[", e, "] (", src[e], ") must lie in [0, ", num_nodes,
               ")");
    EW_REQUIRE(dst[e] >= 0 && dst[e] < num_nodes, kOp, ": dst[", e, "] (", dst[e], ") must lie in [0, ", num_nodes,
               ")");
  }
}

// Descending in-degree, ties by ascending id.
std::vector<int64_t> degree_order(int64_t n, std::span<const int64_t> dst) {
  std::vector<int64_t> in_degree(static_cast<size_t>(n), 0);
  for (int64_t v : dst) ++in_degree[static_cast<size_t>(v)];
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return in_degree[static_cast<size_t>(a)] > in_degree[static_cast<size_t>(b)]; });
  return order;
}

// The symmetrised adjacency (self loops dropped, duplicates kept: they change no BFS).
struct Adjacency {
  std::vector<int64_t> offsets;
  std::vector<int32_t> neighbours;
  int64_t degree(int64_t v) const { return offsets[static_cast<size_t>(v) + 1] - offsets[static_cast<size_t>(v)]; }
};

Adjacency symmetric_adjacency(int64_t n, std::span<const int64_t> src, std::span<const int64_t> dst) {
  Adjacency a;
  a.offsets.assign(static_cast<size_t>(n + 1), 0);
  for (size_t e = 0; e < src.size(); ++e) {
    if (src[e] == dst[e]) continue;
    ++a.offsets[static_cast<size_t>(src[e]) + 1];
    ++a.offsets[static_cast<size_t>(dst[e]) + 1];
  }
  for (int64_t v = 0; v < n; ++v) a.offsets[static_cast<size_t>(v) + 1] += a.offsets[static_cast<size_t>(v)];
  a.neighbours.resize(static_cast<size_t>(a.offsets.back()));
  std::vector<int64_t> cursor(a.offsets.begin(), a.offsets.end() - 1);
  for (size_t e = 0; e < src.size(); ++e) {
    if (src[e] == dst[e]) continue;
    a.neighbours[static_cast<size_t>(cursor[static_cast<size_t>(src[e])]++)] = static_cast<int32_t>(dst[e]);
    a.neighbours[static_cast<size_t>(cursor[static_cast<size_t>(dst[e])]++)] = static_cast<int32_t>(src[e]);
  }
  return a;
}

// Breadth-first search over one component from `root`, appending to `order` the nodes
// in visit order. Neighbours are visited in ascending (degree, id) when `sorted`
// (Cuthill–McKee), in adjacency order otherwise (a plain level sweep). `mark[v] ==
// stamp` means visited in this search.
struct Levels {
  size_t last_level_begin = 0;  // index in `order` where the deepest level starts
  int64_t depth = 0;            // number of levels
};
Levels bfs(const Adjacency& a, int64_t root, bool sorted, std::vector<int64_t>& mark, int64_t stamp,
           std::vector<int64_t>& order) {
  const size_t begin = order.size();
  order.push_back(root);
  mark[static_cast<size_t>(root)] = stamp;
  size_t level_begin = begin, level_end = order.size();
  Levels levels;
  std::vector<int64_t> fresh;
  while (level_begin < level_end) {
    levels.last_level_begin = level_begin;
    ++levels.depth;
    for (size_t i = level_begin; i < level_end; ++i) {
      const int64_t u = order[i];
      fresh.clear();
      for (int64_t k = a.offsets[static_cast<size_t>(u)]; k < a.offsets[static_cast<size_t>(u) + 1]; ++k) {
        const int64_t w = a.neighbours[static_cast<size_t>(k)];
        if (mark[static_cast<size_t>(w)] == stamp) continue;
        mark[static_cast<size_t>(w)] = stamp;
        fresh.push_back(w);
      }
      if (sorted) {
        std::sort(fresh.begin(), fresh.end(), [&](int64_t x, int64_t y) {
          const int64_t dx = a.degree(x), dy = a.degree(y);
          return dx != dy ? dx < dy : x < y;
        });
      }
      order.insert(order.end(), fresh.begin(), fresh.end());
    }
    level_begin = level_end;
    level_end = order.size();
  }
  return levels;
}

// A pseudo-peripheral node of root's component (George & Liu): sweep from the node,
// move to the lowest-degree node of the last level while the depth grows.
int64_t pseudo_peripheral(const Adjacency& a, int64_t root, std::vector<int64_t>& mark, int64_t& stamp) {
  std::vector<int64_t> order;
  int64_t depth = -1;
  for (int sweep = 0; sweep < 8; ++sweep) {  // converges in 2-3 sweeps in practice
    order.clear();
    const Levels levels = bfs(a, root, false, mark, ++stamp, order);
    int64_t best = order[levels.last_level_begin];
    for (size_t i = levels.last_level_begin; i < order.size(); ++i) {
      const int64_t v = order[i];
      if (a.degree(v) < a.degree(best) || (a.degree(v) == a.degree(best) && v < best)) best = v;
    }
    if (levels.depth <= depth) break;
    depth = levels.depth;
    root = best;
  }
  return root;
}

std::vector<int64_t> rcm_order(int64_t n, std::span<const int64_t> src, std::span<const int64_t> dst) {
  const Adjacency a = symmetric_adjacency(n, src, dst);
  // Components start from their lowest-(degree, id) node, in that order.
  std::vector<int64_t> starts(static_cast<size_t>(n));
  std::iota(starts.begin(), starts.end(), int64_t{0});
  std::stable_sort(starts.begin(), starts.end(), [&](int64_t x, int64_t y) { return a.degree(x) < a.degree(y); });
  std::vector<int64_t> mark(static_cast<size_t>(n), 0);  // search stamps (sweeps)
  std::vector<char> placed(static_cast<size_t>(n), 0);
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(n));
  int64_t stamp = 0;
  for (int64_t s : starts) {
    if (placed[static_cast<size_t>(s)]) continue;
    const int64_t root = pseudo_peripheral(a, s, mark, stamp);
    const size_t begin = order.size();
    bfs(a, root, true, mark, ++stamp, order);
    for (size_t i = begin; i < order.size(); ++i) placed[static_cast<size_t>(order[i])] = 1;
  }
  std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

Ordering parse_ordering(const std::string& name) {
  if (name == "none") return Ordering::None;
  if (name == "degree") return Ordering::Degree;
  if (name == "rcm") return Ordering::Rcm;
  detail::throw_invalid_argument("reorder: unknown ordering '", name, "' (expected none, degree or rcm)");
}

const char* to_string(Ordering ordering) {
  switch (ordering) {
    case Ordering::None: return "none";
    case Ordering::Degree: return "degree";
    case Ordering::Rcm: return "rcm";
  }
  return "?";
}

bool NodePermutation::is_identity() const {
  for (size_t i = 0; i < new_to_old.size(); ++i)
    if (new_to_old[i] != static_cast<int64_t>(i)) return false;
  return true;
}

NodePermutation NodePermutation::identity(int64_t num_nodes) {
  std::vector<int64_t> ids(static_cast<size_t>(num_nodes));
  std::iota(ids.begin(), ids.end(), int64_t{0});
  return from_new_to_old(std::move(ids));
}

NodePermutation NodePermutation::from_new_to_old(std::vector<int64_t> new_to_old) {
  const int64_t n = static_cast<int64_t>(new_to_old.size());
  NodePermutation p;
  p.old_to_new.assign(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t old = new_to_old[static_cast<size_t>(i)];
    EW_REQUIRE(old >= 0 && old < n, "NodePermutation: new_to_old[", i, "] (", old, ") must lie in [0, ", n, ")");
    EW_REQUIRE(p.old_to_new[static_cast<size_t>(old)] < 0, "NodePermutation: new_to_old[", i, "] (", old,
               ") repeats new_to_old[", p.old_to_new[static_cast<size_t>(old)], "]");
    p.old_to_new[static_cast<size_t>(old)] = i;
  }
  p.new_to_old = std::move(new_to_old);
  return p;
}

NodePermutation node_ordering(int64_t num_nodes, std::span<const int64_t> src, std::span<const int64_t> dst,
                              Ordering ordering) {
  check_edges(num_nodes, src, dst);
  switch (ordering) {
    case Ordering::None: return NodePermutation::identity(num_nodes);
    case Ordering::Degree: return NodePermutation::from_new_to_old(degree_order(num_nodes, dst));
    case Ordering::Rcm: return NodePermutation::from_new_to_old(rcm_order(num_nodes, src, dst));
  }
  detail::throw_invalid_argument("reorder: ordering ", static_cast<int>(ordering), " is not one of none, degree, rcm");
}

int64_t bandwidth(std::span<const int64_t> src, std::span<const int64_t> dst, const NodePermutation* permutation) {
  EW_REQUIRE(src.size() == dst.size(), "bandwidth: src has ", src.size(), " edges but dst has ", dst.size());
  int64_t widest = 0;
  for (size_t e = 0; e < src.size(); ++e) {
    const int64_t u = permutation ? permutation->old_to_new.at(static_cast<size_t>(src[e])) : src[e];
    const int64_t v = permutation ? permutation->old_to_new.at(static_cast<size_t>(dst[e])) : dst[e];
    widest = std::max(widest, std::abs(u - v));
  }
  return widest;
}

ReorderedGraph Graph::reorder(Ordering ordering) const {
  EW_REQUIRE(defined(), "Graph::reorder: the graph is undefined");
  auto [src, dst] = coo();  // CSR order, host
  ReorderedGraph out;
  out.permutation = node_ordering(num_nodes(), src, dst, ordering);
  for (int64_t& u : src) u = out.permutation.old_to_new[static_cast<size_t>(u)];
  for (int64_t& v : dst) v = out.permutation.old_to_new[static_cast<size_t>(v)];
  const std::vector<float> weights = has_edge_weight() ? edge_weight().to_host_vector() : std::vector<float>{};
  Graph relabelled = from_coo(src, dst, num_nodes(), weights);
  // coo() lists edges in CSR order, the order edge_attr() is stored in: it is the new graph's input order.
  if (has_edge_attr()) relabelled = relabelled.with_edge_attr(edge_attr().to(relabelled.device()));
  out.graph = relabelled.to(device());
  return out;
}

Dataset reorder_dataset(const Dataset& dataset, const NodePermutation& permutation) {
  dataset.validate();
  EW_REQUIRE(permutation.size() == dataset.num_nodes, "reorder_dataset: the permutation has ", permutation.size(),
             " nodes but dataset '", dataset.name, "' has ", dataset.num_nodes);
  const std::vector<int64_t>& to_new = permutation.old_to_new;
  const std::vector<int64_t>& to_old = permutation.new_to_old;
  Dataset out;
  out.name = dataset.name;
  out.num_nodes = dataset.num_nodes;
  out.num_classes = dataset.num_classes;
  out.note = dataset.note;
  out.edge_index.resize(dataset.edge_index.size());
  for (size_t k = 0; k < dataset.edge_index.size(); ++k)
    out.edge_index[k] = to_new[static_cast<size_t>(dataset.edge_index[k])];
  // Edges keep their positions, so their weights and features stay with them.
  out.edge_weight = dataset.edge_weight;
  out.edge_feat = dataset.edge_feat;
  out.edge_feat_dim = dataset.edge_feat_dim;
  if (!dataset.labels.empty()) {
    out.labels.resize(dataset.labels.size());
    for (size_t i = 0; i < to_old.size(); ++i) out.labels[i] = dataset.labels[static_cast<size_t>(to_old[i])];
  }
  auto map_split = [&](const std::vector<int64_t>& ids) {
    std::vector<int64_t> mapped(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) mapped[k] = to_new[static_cast<size_t>(ids[k])];
    std::sort(mapped.begin(), mapped.end());
    return mapped;
  };
  out.train_idx = map_split(dataset.train_idx);
  out.valid_idx = map_split(dataset.valid_idx);
  out.test_idx = map_split(dataset.test_idx);

  const Features& in = dataset.features;
  Features& f = out.features;
  f.rows = in.rows;
  f.cols = in.cols;
  f.format = in.format;
  if (in.is_sparse()) {
    f.csr.rows = in.csr.rows;
    f.csr.cols = in.csr.cols;
    f.csr.offsets.assign(1, 0);
    f.csr.offsets.reserve(static_cast<size_t>(in.csr.rows + 1));
    f.csr.indices.reserve(in.csr.indices.size());
    f.csr.values.reserve(in.csr.values.size());
    for (size_t i = 0; i < to_old.size(); ++i) {
      const size_t old = static_cast<size_t>(to_old[i]);
      const auto b = static_cast<std::ptrdiff_t>(in.csr.offsets[old]);
      const auto e = static_cast<std::ptrdiff_t>(in.csr.offsets[old + 1]);
      f.csr.indices.insert(f.csr.indices.end(), in.csr.indices.begin() + b, in.csr.indices.begin() + e);
      f.csr.values.insert(f.csr.values.end(), in.csr.values.begin() + b, in.csr.values.begin() + e);
      f.csr.offsets.push_back(static_cast<int64_t>(f.csr.indices.size()));
    }
  } else if (!in.dense.empty()) {
    const size_t cols = static_cast<size_t>(in.cols);
    f.dense.resize(in.dense.size());
    for (size_t i = 0; i < to_old.size(); ++i) {
      const float* row = in.dense.data() + static_cast<size_t>(to_old[i]) * cols;
      std::copy(row, row + cols, f.dense.data() + i * cols);
    }
  }
  return out;
}

Tensor rows_in_original_order(const Tensor& rows, const NodePermutation& permutation) {
  EW_REQUIRE(rows.rows() == permutation.size(), "rows_in_original_order: rows has ", rows.rows(),
             " rows for a permutation of ", permutation.size(), " nodes");
  const std::vector<float> in = rows.to_host_vector();
  const size_t cols = static_cast<size_t>(rows.cols());
  std::vector<float> out(in.size());
  for (size_t old = 0; old < permutation.old_to_new.size(); ++old) {
    const float* row = in.data() + static_cast<size_t>(permutation.old_to_new[old]) * cols;
    std::copy(row, row + cols, out.data() + old * cols);
  }
  return Tensor::from_host(out, rows.rows(), rows.cols(), rows.device());
}

}  // namespace edgewise::gnn
