// Datasets: node-classification graphs in host memory, loaded by name or path from
// .npz files in the OGB npz layout, gnn-benchmark and scipy.sparse .npz files,
// OGB raw dataset folders and plain edge lists (synthetic generators: synthetic.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgewise/gnn/data/csr_matrix.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::gnn {

// How node features are held. Auto: CSR when the density (fraction of nonzero
// entries) is at most LoadOptions::sparse_threshold, dense otherwise.
enum class FeatureFormat { Auto, Dense, Sparse };

// "auto", "dense", "sparse" (case-insensitive); std::invalid_argument otherwise.
FeatureFormat parse_feature_format(std::string_view text);
const char* to_string(FeatureFormat format);

// Node features [N, F], dense or CSR (never both).
struct Features {
  int64_t rows = 0;  // N
  int64_t cols = 0;  // F (0: the dataset has no features)
  FeatureFormat format = FeatureFormat::Dense;  // Dense or Sparse, never Auto
  std::vector<float> dense;                     // [N * F] row-major when Dense
  CsrMatrix csr;                                // when Sparse

  bool is_sparse() const { return format == FeatureFormat::Sparse; }
  int64_t nnz() const;      // entries unequal to 0
  double density() const;   // nnz / (N * F); 0 for an empty shape
  // The dense matrix as a view (Dense only; std::invalid_argument otherwise).
  MatrixView<const float> dense_view() const;
  // Converts in place (no-op when already in that format).
  void to_dense();
  void to_sparse();
};

// A node-classification graph in host memory.
//
// edge_index [2, E] row-major: the sources at positions [0, E), the destinations
//            at [E, 2E); every id in [0, num_nodes). The bundled .npz files and the generators give
//            each undirected edge in both directions, no self loops, no
//            duplicates, sorted by (source, destination); loading does not
//            require this of other files.
// labels     [N] class ids in [0, num_classes), or empty when the data has none
//            (num_classes 0). Rows without a real label may carry a placeholder
//            (CiteSeer's 15 featureless nodes have label 0) and belong to no split.
// train_idx, valid_idx, test_idx: node ids, strictly ascending, pairwise
//            disjoint, in [0, N); any may be empty.
// features   [N, F], every value finite.
// edge_weight optional [E], the weight of edge e of edge_index (the third column
//            of an edge list), every value finite; empty when the data has none.
// edge_feat  optional [E, edge_feat_dim] row-major, row e belonging to edge e of
//            edge_index (empty with edge_feat_dim 0), every value finite. Code that
//            reorders or drops edges must carry it along (Graph::with_edge_attr
//            moves it into CSR order).
struct Dataset {
  std::string name;
  int64_t num_nodes = 0;
  int64_t num_classes = 0;
  std::vector<int64_t> edge_index;
  std::vector<int64_t> labels;
  std::vector<int64_t> train_idx, valid_idx, test_idx;
  Features features;
  std::vector<float> edge_weight;
  std::vector<float> edge_feat;
  int64_t edge_feat_dim = 0;
  // What the loader made up or left out, for the caller to print (empty when the
  // file gave everything): a random split, default features, absent labels,
  // keys that were not read.
  std::string note;

  int64_t num_edges() const { return static_cast<int64_t>(edge_index.size() / 2); }
  std::span<const int64_t> src() const { return {edge_index.data(), static_cast<size_t>(num_edges())}; }
  std::span<const int64_t> dst() const {
    return {edge_index.data() + num_edges(), static_cast<size_t>(num_edges())};
  }

  // Checks every sentence of the contract above (and that features have N rows);
  // throws std::invalid_argument "dataset '<name>': ..." naming the first bad
  // position and value.
  void validate() const;
};

// The most classes load_dataset accepts from a file (a bigger count is taken for a
// corrupt file, not allocated).
inline constexpr int64_t kMaxClasses = int64_t{1} << 20;

// The most nodes a Graph can hold (int32 ids), and so the most a file may declare.
inline constexpr int64_t kMaxNodes = (int64_t{1} << 31) - 1;

struct LoadOptions {
  FeatureFormat features = FeatureFormat::Auto;
  double sparse_threshold = 0.1;  // Auto: CSR when density <= this
  // Seed of the random split made for files that carry labels but no split.
  uint64_t split_seed = 0;
  // Edge conventions; std::nullopt keeps the format's own (see load_dataset).
  // symmetrize: A + A^T with duplicate edges merged (an undirected graph stored
  // both ways); remove_self_loops: drop every edge (v, v).
  std::optional<bool> symmetrize = std::nullopt;
  std::optional<bool> remove_self_loops = std::nullopt;
  // The most nodes a file may make (in [0, kMaxNodes]): a node count or id beyond
  // it is an error naming the file before anything is sized by it. An edge list
  // makes largest id + 1 nodes, so one line naming node 10^9 asks for 10^9 nodes.
  int64_t max_nodes = kMaxNodes;
};

// The folder datasets are looked up in by name: $EDGEWISE_DATA_DIR when set and
// non-empty, else $XDG_CACHE_HOME/edgewise/datasets, else
// ~/.cache/edgewise/datasets (an empty path when none of these can be formed).
// The library never assumes any other location.
std::filesystem::path default_data_dir();

// The file load_dataset() reads for `name_or_path`: a path (contains a '/', ends
// in ".npz", or names an existing file) is taken as is; a name such as "cora",
// "CiteSeer", "amazon-photo" or "coauthor_cs" (lower-cased, '-' read as '_') is
// <default_data_dir()>/<name>.npz. Throws DataFileError when the file does not
// exist, saying where it looked and how to set EDGEWISE_DATA_DIR.
std::filesystem::path resolve_dataset_path(std::string_view name_or_path);  // of node data (dataset_spec.hpp)

// Loads a dataset; the reader is picked by what the path holds:
//
//   .npz with num_nodes and edge_index   the OGB npz layout (below);
//   .npz with adj_indptr / adj_data ...  gnn-benchmark (Shchur et al. 2018): the
//        CSR adjacency adj_{data,indices,indptr,shape}; features attr_{data,
//        indices,indptr,shape} (CSR, never inflated unless dense is asked for)
//        or attr_matrix (dense), or none; labels (N,) or a one-hot CSR
//        labels_{data,indices,indptr,shape}. Text and object entries
//        (node_names, attr_names, class_names...) are not read (object arrays are
//        never unpickled) and the note lists them;
//   .npz with format and shape           scipy.sparse.save_npz of the adjacency
//        (csr, csc or coo): a graph only;
//   a folder with raw/edge.csv.gz        an OGB raw dataset folder: raw/edge.csv.gz,
//        optional raw/num-node-list.csv.gz, raw/node-feat.csv.gz,
//        raw/node-label.csv.gz ("nan" = unlabelled, placeholder 0), and
//        split/<name>/{train,valid,test}.csv.gz (the first <name> in sorted order);
//        plain .csv files are read as well;
//   any other file                      an edge list: one "src,dst" or "src dst"
//        pair of node ids >= 0 per line, optionally a third column, the edge's
//        weight (Dataset::edge_weight; finite), '#' and '%' comment lines, an
//        optional header line of names (the first data line, none of whose
//        fields is a number), a UTF-8 byte-order mark; gzip is read
//        transparently. Any other line that does not parse, a NUL byte, or a
//        file without a single edge is an error naming the line. N = largest
//        id + 1 (at most LoadOptions::max_nodes).
//
// Edge conventions, each the format's reference loader's (LoadOptions::symmetrize
// and remove_self_loops override them; Dataset::note says what was done, e.g.
// "5429 stored edges -> 10556 directed edges after symmetrising"):
//   gnn-benchmark .npz   undirected: A + A^T, duplicates merged, self loops
//                        removed (Shchur et al.'s loader; PyG's CitationFull,
//                        Amazon, Coauthor);
//   OGB raw folder       as stored (OGB's loaders do not symmetrise; its examples
//                        call to_undirected);
//   OGB npz, scipy.sparse .npz, edge lists: as stored.
// Symmetrising a graph with edge weights or edge features is refused (which value
// would the added reverse edge carry?); removing self loops carries them along.
//
// For all but the OGB npz layout: an adjacency entry (i, j) (nonzero value) is
// the edge i -> j, and edges are sorted by (source, destination). A graph without
// node features gets one
// feature column, each node's in-degree (the number of edges ending at it; its
// degree on an undirected graph), which a GNN can use where a constant would
// carry nothing. A graph without labels has num_classes 0 and no split.
//
// In every format, labels without any split (in the OGB npz layout: none of the
// three split keys) get a random one as in Shchur et al.: per class, in
// ascending class order, 20 train and 30 valid nodes drawn with
// LoadOptions::split_seed, the rest test. Dataset::note says what was made up.
//
// The OGB npz layout (see the datasets README): keys
// num_nodes (scalar or [1]), edge_index [2, E] integer; optional node_feat
// [N, F] (float32, float64, integer or bool; converted to float32), node_label
// [N] or [N, 1] integer, train_idx / valid_idx / test_idx integer, num_classes
// (scalar; default max(label) + 1), edge_feat [E, D] or [E] (edge features in
// edge_index order; converted to float32, finite). Other keys are ignored. A split key left
// out means no such split (unless all three are out: see the random split above).
//
// Beyond the shapes, the file must make a trainable dataset: every node_feat value
// finite (the first NaN / infinity is named with its [row, column]); labels in
// [0, num_classes) — an inferred class count (max(label) + 1) may not exceed
// num_nodes, and a stored one may not exceed kMaxClasses; a split key, when present,
// is not empty (leave the key out for "no such split").
//
// Features: with Sparse (or Auto on sparse data) a float32 C-order node_feat is
// inflated in row chunks straight into CSR, never materialising the dense
// matrix; Auto switches to dense as soon as the nonzeros seen exceed
// sparse_threshold * N * F. Dense reads the payload directly into the result.
//
// Everything is validated (Dataset::validate plus shapes and dtypes); any
// problem throws DataFileError naming the file, the key and the first bad value.
Dataset load_dataset(std::string_view name_or_path, const LoadOptions& options = {});

}  // namespace edgewise::gnn
