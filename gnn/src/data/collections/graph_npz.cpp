// The OGB graph-property npz layout (reddit_threads.npz): all graphs' edges with
// per-graph local ids, node and edge counts per graph, one label per graph.
#include <algorithm>
#include <limits>

#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& key, const std::string& what) {
  throw DataFileError("'" + file + "': key '" + key + "': " + what);
}

NpyArray require(const NpzArchive& archive, const std::string& key) {
  if (!archive.contains(key))
    throw DataFileError("'" + archive.path() + "': missing key '" + key +
                        "' (a graph collection needs edge_index, num_nodes_list, num_edges_list, graph_label)");
  return archive.read(key);
}

// A [G] or [G, 1] integer vector.
std::vector<int64_t> read_vector(const NpzArchive& archive, const std::string& key) {
  const NpyArray a = require(archive, key);
  const bool ok = a.ndim() == 1 || (a.ndim() == 2 && a.shape[1] == 1);
  if (!ok || (a.dtype.kind != 'i' && a.dtype.kind != 'u'))
    fail(archive.path(), key, "expected a 1-d integer array, got dtype " + a.dtype.str() + " with " +
                                  std::to_string(a.ndim()) + " dimensions");
  return a.as<int64_t>();
}

}  // namespace

GraphDataset load_graph_npz(const std::string& path) {
  const NpzArchive archive = NpzArchive::open(path);
  GraphDataset d;
  std::filesystem::path p(path);
  d.name = p.stem().string();
  const std::vector<int64_t> nodes = read_vector(archive, "num_nodes_list");
  const std::vector<int64_t> edges = read_vector(archive, "num_edges_list");
  d.labels = read_vector(archive, "graph_label");
  const size_t g_count = nodes.size();
  if (edges.size() != g_count) fail(path, "num_edges_list", "has " + std::to_string(edges.size()) +
                                                                " entries, num_nodes_list " + std::to_string(g_count));
  if (d.labels.size() != g_count)
    fail(path, "graph_label", "has " + std::to_string(d.labels.size()) + " entries for " + std::to_string(g_count) +
                                  " graphs");
  d.node_offsets.assign(g_count + 1, 0);
  d.edge_offsets.assign(g_count + 1, 0);
  for (size_t g = 0; g < g_count; ++g) {
    if (nodes[g] < 0 || nodes[g] > std::numeric_limits<int32_t>::max())
      fail(path, "num_nodes_list", "graph " + std::to_string(g) + " has " + std::to_string(nodes[g]) + " nodes");
    if (edges[g] < 0)
      fail(path, "num_edges_list", "graph " + std::to_string(g) + " has " + std::to_string(edges[g]) + " edges");
    if (d.labels[g] < 0) fail(path, "graph_label", "graph " + std::to_string(g) + " label " +
                                                       std::to_string(d.labels[g]) + " is negative");
    d.node_offsets[g + 1] = d.node_offsets[g] + nodes[g];
    d.edge_offsets[g + 1] = d.edge_offsets[g] + edges[g];
  }
  d.num_classes = d.labels.empty() ? 0 : *std::max_element(d.labels.begin(), d.labels.end()) + 1;
  if (d.num_classes > static_cast<int64_t>(g_count))
    fail(path, "graph_label", "largest label " + std::to_string(d.num_classes - 1) + " exceeds the graph count");

  const NpyArray ei = require(archive, "edge_index");
  if (ei.ndim() != 2 || ei.shape[0] != 2 || (ei.dtype.kind != 'i' && ei.dtype.kind != 'u'))
    fail(path, "edge_index", "expected an integer [2, E] array");
  const int64_t e_count = ei.shape[1];
  if (e_count != d.edge_offsets.back())
    fail(path, "edge_index", "has " + std::to_string(e_count) + " columns, num_edges_list sums to " +
                                 std::to_string(d.edge_offsets.back()));
  const std::vector<int64_t> flat = ei.as<int64_t>();
  d.src.resize(static_cast<size_t>(e_count));
  d.dst.resize(static_cast<size_t>(e_count));
  for (size_t g = 0; g < g_count; ++g) {
    for (int64_t e = d.edge_offsets[g]; e < d.edge_offsets[g + 1]; ++e) {
      const int64_t u = flat[static_cast<size_t>(e)], v = flat[static_cast<size_t>(e_count + e)];
      if (u < 0 || u >= nodes[g] || v < 0 || v >= nodes[g])
        fail(path, "edge_index", "column " + std::to_string(e) + " (" + std::to_string(u) + " -> " +
                                     std::to_string(v) + ") of graph " + std::to_string(g) +
                                     " leaves its local node range [0, " + std::to_string(nodes[g]) + ")");
      d.src[static_cast<size_t>(e)] = static_cast<int32_t>(u);
      d.dst[static_cast<size_t>(e)] = static_cast<int32_t>(v);
    }
  }
  if (archive.contains("fold")) {
    d.folds = read_vector(archive, "fold");
    if (d.folds.size() != g_count)
      fail(path, "fold", "has " + std::to_string(d.folds.size()) + " entries for " + std::to_string(g_count) +
                             " graphs");
    for (size_t g = 0; g < g_count; ++g)
      if (d.folds[g] < 0) fail(path, "fold", "graph " + std::to_string(g) + " fold " + std::to_string(d.folds[g]));
  }
  if (archive.contains("node_feat")) {
    const NpyArray f = archive.read("node_feat");
    if (f.ndim() != 2 || f.shape[0] != d.total_nodes())
      fail(path, "node_feat", "expected [" + std::to_string(d.total_nodes()) + ", F] (the nodes of all graphs)");
    d.num_features = f.shape[1];
    d.features = f.as<float>();
  }
  try {
    d.validate();
  } catch (const std::invalid_argument& e) {
    throw DataFileError("'" + path + "': " + e.what());
  }
  return d;
}

}  // namespace edgewise::gnn
