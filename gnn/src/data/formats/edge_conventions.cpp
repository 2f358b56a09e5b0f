// Edge conventions of the readers: symmetrise (A + A^T, duplicates merged) and drop
// self loops as the format's reference loader does, or as the caller asked, and say
// in the dataset's note what was done.
#include <algorithm>
#include <vector>

#include "data/edge_list.hpp"
#include "data/formats/formats.hpp"

namespace edgewise::gnn::formats {

namespace {

std::vector<uint64_t> edge_keys(const Dataset& d) {
  const int bits = node_bits(d.num_nodes);
  const auto src = d.src(), dst = d.dst();
  std::vector<uint64_t> keys(src.size());
  for (size_t e = 0; e < src.size(); ++e)
    keys[e] = edge_key(static_cast<uint64_t>(src[e]), static_cast<uint64_t>(dst[e]), bits);
  return keys;
}

// Distinct edges whose reverse is not in the graph: |S u S^T| - |S| over the set S
// of distinct edges (a self loop is its own reverse).
int64_t edges_without_reverse(const Dataset& d) {
  EdgeListOptions distinct;
  distinct.remove_self_loops = false;
  const int64_t alone = static_cast<int64_t>(canonical_edge_index(d.num_nodes, edge_keys(d), distinct).size() / 2);
  EdgeListOptions both = distinct;
  both.symmetrize = true;
  const int64_t with_reverse = static_cast<int64_t>(canonical_edge_index(d.num_nodes, edge_keys(d), both).size() / 2);
  return with_reverse - alone;
}

// Drops the edges (v, v), carrying edge weights and features along; returns how many.
int64_t drop_self_loops(Dataset& d) {
  const int64_t E = d.num_edges();
  const int64_t D = d.edge_feat_dim;
  int64_t kept = 0;
  for (int64_t e = 0; e < E; ++e) {
    const int64_t u = d.edge_index[static_cast<size_t>(e)], v = d.edge_index[static_cast<size_t>(E + e)];
    if (u == v) continue;
    d.edge_index[static_cast<size_t>(kept)] = u;
    d.edge_index[static_cast<size_t>(E + kept)] = v;  // behind the read position of row 1: E + kept <= E + e
    if (!d.edge_weight.empty()) d.edge_weight[static_cast<size_t>(kept)] = d.edge_weight[static_cast<size_t>(e)];
    if (D > 0)
      std::copy_n(d.edge_feat.begin() + e * D, D, d.edge_feat.begin() + kept * D);
    ++kept;
  }
  // Row 1 moves down to start at `kept`.
  std::copy_n(d.edge_index.begin() + E, kept, d.edge_index.begin() + kept);
  d.edge_index.resize(static_cast<size_t>(2 * kept));
  if (!d.edge_weight.empty()) d.edge_weight.resize(static_cast<size_t>(kept));
  if (D > 0) d.edge_feat.resize(static_cast<size_t>(kept * D));
  return E - kept;
}

std::string count(int64_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

}  // namespace

void apply_edge_conventions(Dataset& d, const EdgeConvention& convention, const LoadOptions& options,
                            const std::string& where) {
  // The edge keys below pack ids in [0, N): check them first.
  for (size_t i = 0; i < d.edge_index.size(); ++i) {
    const int64_t id = d.edge_index[i];
    if (id < 0 || id >= d.num_nodes) {
      const size_t E = d.edge_index.size() / 2;
      throw DataFileError(where + ": edge_index[" + std::to_string(i / E) + ", " + std::to_string(i % E) + "] (" +
                          std::to_string(id) + ") must lie in [0, " + std::to_string(d.num_nodes) + ")");
    }
  }
  const bool symmetrize = options.symmetrize.value_or(convention.symmetrize);
  const bool remove_loops = options.remove_self_loops.value_or(convention.remove_self_loops);
  const int64_t stored = d.num_edges();
  if (symmetrize) {
    if (!d.edge_weight.empty() || d.edge_feat_dim > 0)
      throw DataFileError(where + ": cannot symmetrise a graph whose edges carry " +
                          (d.edge_weight.empty() ? "features" : "weights") +
                          " (which value would an added reverse edge get?); load it as stored "
                          "(LoadOptions::symmetrize = false, edgewise-train --undirected 0)");
    int64_t loops = 0;
    for (int64_t e = 0; e < stored; ++e) loops += d.src()[static_cast<size_t>(e)] == d.dst()[static_cast<size_t>(e)];
    EdgeListOptions o;
    o.symmetrize = true;
    o.deduplicate = true;
    o.remove_self_loops = remove_loops;
    d.edge_index = canonical_edge_index(d.num_nodes, edge_keys(d), o);
    std::string what = count(stored, "stored edge") + " \u2192 " + count(d.num_edges(), "directed edge") +
                       " after symmetrising (A + A^T, duplicates merged";
    what += remove_loops ? ", " + count(loops, "self loop") + " removed)" : ", self loops kept)";
    add_note(d, what + (convention.symmetrize ? "" : ", as asked"));
    return;
  }
  const int64_t loops = remove_loops ? drop_self_loops(d) : 0;
  const int64_t one_way = edges_without_reverse(d);
  // Said only when something changed or the graph is directed: the hint a user
  // needs when a format they thought undirected is not.
  if (loops == 0 && one_way == 0 && !convention.symmetrize) return;
  std::string what = count(stored, "edge") + " as stored";
  if (loops > 0) what += ", " + count(loops, "self loop") + " removed";
  if (one_way > 0) {
    what += " (directed: " + count(one_way, "edge") + " without its reverse; " +
            (convention.symmetrize ? "symmetrising was turned off)"
                                   : "symmetrize=True or edgewise-train --undirected 1 makes it undirected)");
    if (!convention.note.empty()) what += "; " + convention.note;
  }
  add_note(d, what);
}

}  // namespace edgewise::gnn::formats
