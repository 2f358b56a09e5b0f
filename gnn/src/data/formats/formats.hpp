// The dataset readers (one file each), which the registry (registry.cpp) picks from,
// and what they share.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"

namespace edgewise::gnn::formats {

Dataset load_ogb_npz(const std::string& file, const LoadOptions& options);
Dataset load_gnn_benchmark_npz(const std::string& file, const NpzArchive& archive, const LoadOptions& options);
Dataset load_scipy_sparse_npz(const std::string& file, const NpzArchive& archive, const LoadOptions& options);
Dataset load_ogb_raw_folder(const std::filesystem::path& folder, const LoadOptions& options);
Dataset load_edge_list(const std::filesystem::path& file, const LoadOptions& options);

// The text of a one-element NPY entry of dtype |S<n> (bytes) or <U<n> (str),
// read without NumPy's object machinery: object arrays are refused, never unpickled.
std::string read_npz_text_scalar(const NpzArchive& archive, std::string_view key);

// A compressed sparse matrix as scipy stores it: `outer` + 1 pointers into
// `indices` (values in [0, inner)) and `data`. check() throws DataFileError
// "<where>: key '<prefix>indptr'..." on the first inconsistency.
struct CompressedParts {
  std::vector<int64_t> indptr, indices;
  std::vector<float> data;
  int64_t outer = 0, inner = 0;
  void check(const std::string& where, const std::string& prefix) const;
};

// Reads <prefix>{data,indices,indptr,shape} of a CSR matrix; with `csc` the
// shape's columns are the outer dimension. `prefix` is "adj_", "attr_", "" ...
CompressedParts read_compressed(const std::string& file, const NpzArchive& archive, const std::string& prefix,
                                bool csc);

// The edges (i, j) of the nonzero entries A[i, j], sorted by (i, j), as edge_index.
std::vector<int64_t> edges_from_pairs(std::vector<std::pair<int64_t, int64_t>> pairs);
// The same for weighted edges: `weights_out` gets each edge's weight in the sorted
// order (equal pairs keep their file order).
std::vector<int64_t> edges_from_weighted_pairs(std::vector<std::pair<int64_t, int64_t>> pairs,
                                               std::vector<float> weights, std::vector<float>& weights_out);

// A node count `n` read from a file, checked before anything is sized by it:
// DataFileError "<where>: <what> (n) ..." unless 1 <= n <= options.max_nodes.
void require_node_count(int64_t n, const LoadOptions& options, const std::string& where, const std::string& what);
std::vector<int64_t> edges_from_compressed(const CompressedParts& m, bool csc);

// Row-major CSR features from CSR parts: columns sorted within each row,
// duplicates summed, zeros dropped; non-finite values are an error naming `key`.
CsrMatrix csr_features(CompressedParts m, const std::string& where, const std::string& key);

// Puts features in the format `options` asks for (Auto: CSR at density <= threshold).
// Inflating CSR features beyond npz_max_entry_bytes() is a DataFileError naming `where`.
void apply_feature_format(Features& f, const LoadOptions& options, const std::string& where);

// One feature column: each node's in-degree. Appends to d.note.
void add_degree_features(Dataset& d, const LoadOptions& options);

// max(label) + 1 (labels >= 0, fewer classes than nodes, else DataFileError naming `where`).
int64_t infer_num_classes(const std::vector<int64_t>& labels, int64_t num_nodes, const std::string& where);

// Shchur et al.'s split: per class, ascending, 20 train, 30 valid, the rest
// test, from a permutation seeded by `seed`; each list sorted. Nodes marked in
// `unlabelled` (when not empty: [N]) belong to no split. Appends to d.note.
void add_random_split(Dataset& d, uint64_t seed, const std::vector<bool>& unlabelled = {},
                      int64_t train_per_class = 20, int64_t valid_per_class = 30);

// A format's edge convention: what its reference loader does with the stored edges.
struct EdgeConvention {
  bool symmetrize = false;
  bool remove_self_loops = false;
  std::string note;  // said after "as stored" (e.g. what the format's own examples do)
};

// Applies LoadOptions::symmetrize / remove_self_loops (unset: the convention's) to
// d's edges and says in d.note what was done. Symmetrising sorts the edges by
// (source, destination); dropping self loops keeps the order and carries edge
// weights and features along. DataFileError naming `where` when symmetrising a
// graph whose edges carry weights or features.
void apply_edge_conventions(Dataset& d, const EdgeConvention& convention, const LoadOptions& options,
                            const std::string& where);

// Appends a sentence to d.note.
void add_note(Dataset& d, const std::string& sentence);

// d.validate(), its error rethrown as DataFileError prefixed with `where`.
void validate_loaded(const Dataset& d, const std::string& where);

}  // namespace edgewise::gnn::formats
