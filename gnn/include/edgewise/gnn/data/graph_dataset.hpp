// Graph collections for graph classification: many small graphs, one label each,
// held as one concatenation (the layout of OGB's graph-property npz), with readers
// for reddit_threads-style .npz files and the TU format, a seeded synthetic
// generator, one-hot degree features and seeded stratified k-fold splits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace edgewise::gnn {

// G graphs stored back to back.
//
// node_offsets [G + 1]  graph g owns nodes [node_offsets[g], node_offsets[g+1]) of
//                       the concatenation; node_offsets[0] == 0, nondecreasing.
// edge_offsets [G + 1]  graph g owns edge columns [edge_offsets[g], edge_offsets[g+1]).
// src, dst     [E]      edge endpoints LOCAL to their graph: in [0, n_g).
// labels       [G]      class ids in [0, num_classes).
// features     [N * F]  row-major node features of all graphs (F = num_features; 0: none yet).
// folds        [G]      optional fold id per graph (a stored cross-validation split), or empty.
struct GraphDataset {
  std::string name;
  std::vector<int64_t> node_offsets{0}, edge_offsets{0};
  std::vector<int32_t> src, dst;
  std::vector<int64_t> labels;
  int64_t num_classes = 0;
  std::vector<float> features;
  int64_t num_features = 0;
  std::vector<int64_t> folds;
  std::string note;  // what the loader made up (features, ...)

  int64_t num_graphs() const { return static_cast<int64_t>(labels.size()); }
  int64_t total_nodes() const { return node_offsets.back(); }
  int64_t total_edges() const { return edge_offsets.back(); }
  int64_t graph_nodes(int64_t g) const { return node_offsets[g + 1] - node_offsets[g]; }

  // Checks every sentence above; throws std::invalid_argument "graph dataset '<name>': ..."
  // naming the first bad graph / position.
  void validate() const;
};

// Node features when a dataset has none: one-hot of each node's in-degree (the
// number of edge columns ending at it; the degree of an undirected graph), degrees
// above `max_degree` clamped to it, so F = max_degree + 1 (PyG's OneHotDegree).
// max_degree < 0: the largest degree in the dataset, at most 127.
// Replaces any features; appends to note.
void add_one_hot_degree_features(GraphDataset& d, int64_t max_degree = -1);

// The OGB graph-property npz layout (reddit_threads.npz): edge_index [2, E] with
// per-graph local ids, num_nodes_list [G], num_edges_list [G], graph_label [G] (or
// [G, 1]), optional fold [G], optional node_feat [N, F]. Errors: DataFileError
// naming the file, the key and the first bad graph.
GraphDataset load_graph_npz(const std::string& path);

// The TU format (Morris et al., TUDataset): files <prefix>_A.txt ("i, j" 1-based
// global node ids per line), <prefix>_graph_indicator.txt (the 1-based graph of
// node i on line i, nondecreasing), <prefix>_graph_labels.txt (one integer per
// graph; mapped to 0..C-1 in ascending order; every graph must have nodes),
// optional <prefix>_node_labels.txt (one integer per node, one-hot encoded up to
// 1024 distinct labels, beyond that one column holding the label's index 0..c-1)
// and <prefix>_node_attributes.txt (comma-separated floats per node; placed before
// the node labels). Edges are kept as stored (TU files store both directions of
// an undirected edge). `location` is
// the folder holding the files (prefix = the folder's name) or the prefix path
// itself ("dir/MUTAG" for dir/MUTAG_A.txt). Errors: DataFileError naming the file
// and line.
GraphDataset load_tu_dataset(const std::filesystem::path& location);

// A seeded synthetic two-class task distinguishable only by structure: class 0
// graphs are rings with a few random chords, class 1 graphs are "stars of
// cliques" (dense local clusters around hubs), both with the same node-count
// range and similar edge counts. Deterministic for a seed.
struct SyntheticGraphsParams {
  int64_t num_graphs = 600;
  int64_t min_nodes = 10;
  int64_t max_nodes = 30;
};
GraphDataset synthetic_graph_dataset(const SyntheticGraphsParams& params = {}, uint64_t seed = 0);

// A graph collection from a spec (dataset_spec.hpp): "synthetic[:G]" (the generator,
// G graphs), a path to an .npz, a TU folder or prefix, or a name looked up as the TU
// folder <data dir>/<name> or <data dir>/<name>.npz; the reader comes from the one
// registry (dataset_readers()). Adds one-hot degree features when the data has none.
GraphDataset load_graph_dataset(std::string_view spec, uint64_t seed = 0);

// Fold ids [G] in [0, k): per class, in ascending class order, the class's graphs
// in a seeded random order are dealt round-robin to the folds (stratified).
std::vector<int64_t> stratified_folds(const std::vector<int64_t>& labels, int64_t k, uint64_t seed);

}  // namespace edgewise::gnn
