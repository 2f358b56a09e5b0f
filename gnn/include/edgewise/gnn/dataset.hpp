// Datasets: node-classification graphs in host memory, loaded by name or path from
// .npz files in the OGB npz layout (synthetic generators: synthetic.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "edgewise/gnn/csr_matrix.hpp"
#include "edgewise/gnn/npz.hpp"
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
struct Dataset {
  std::string name;
  int64_t num_nodes = 0;
  int64_t num_classes = 0;
  std::vector<int64_t> edge_index;
  std::vector<int64_t> labels;
  std::vector<int64_t> train_idx, valid_idx, test_idx;
  Features features;

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

struct LoadOptions {
  FeatureFormat features = FeatureFormat::Auto;
  double sparse_threshold = 0.1;  // Auto: CSR when density <= this
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
std::filesystem::path resolve_dataset_path(std::string_view name_or_path);

// Loads a dataset in the OGB npz layout (see the datasets README): keys
// num_nodes (scalar or [1]), edge_index [2, E] integer; optional node_feat
// [N, F] (float32, float64, integer or bool; converted to float32), node_label
// [N] or [N, 1] integer, train_idx / valid_idx / test_idx integer, num_classes
// (scalar; default max(label) + 1). Other keys are ignored.
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
