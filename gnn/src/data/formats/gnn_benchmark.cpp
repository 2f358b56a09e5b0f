// gnn-benchmark .npz files (Shchur et al., "Pitfalls of GNN evaluation", 2018):
// CSR adjacency, CSR or dense attributes, labels; names and text are skipped.
#include <algorithm>
#include <cmath>
#include <set>

#include "data/formats/formats.hpp"
#include "data/io/npy_shape.hpp"

namespace edgewise::gnn::formats {

Dataset load_gnn_benchmark_npz(const std::string& file, const NpzArchive& archive, const LoadOptions& options) {
  const std::string where = "npz '" + file + "'";
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw DataFileError(where + ": key '" + key + "' " + what);
  };
  std::set<std::string> used;
  Dataset d;
  d.name = std::filesystem::path(file).stem().string();

  const CompressedParts adj = read_compressed(file, archive, "adj_", false);
  used.insert({"adj_data", "adj_indices", "adj_indptr", "adj_shape"});
  if (adj.outer != adj.inner)
    fail("adj_shape",
         "must be square (N, N), got (" + std::to_string(adj.outer) + ", " + std::to_string(adj.inner) + ")");
  require_node_count(adj.outer, options, where, "key 'adj_shape'");
  d.num_nodes = adj.outer;
  d.edge_index = edges_from_compressed(adj, false);
  // Shchur et al.'s loader and PyG's read_npz make the graph undirected without self loops.
  apply_edge_conventions(d, EdgeConvention{.symmetrize = true, .remove_self_loops = true, .note = {}}, options, where);
  const std::string N = std::to_string(d.num_nodes);

  if (archive.contains("attr_indptr") || archive.contains("attr_data")) {
    CompressedParts attr = read_compressed(file, archive, "attr_", false);
    used.insert({"attr_data", "attr_indices", "attr_indptr", "attr_shape"});
    if (attr.outer != d.num_nodes)
      fail("attr_shape", "must have N = " + N + " rows (as adj_shape), got " + std::to_string(attr.outer));
    d.features.rows = attr.outer;
    d.features.cols = attr.inner;
    d.features.format = FeatureFormat::Sparse;
    d.features.csr = csr_features(std::move(attr), where, "attr_data");
    apply_feature_format(d.features, options, where);
  } else if (archive.contains("attr_matrix")) {
    used.insert("attr_matrix");
    NpyArray a = archive.read("attr_matrix");
    if (a.shape.size() != 2 || a.shape[0] != d.num_nodes)
      fail("attr_matrix", "must have shape (N, F) with N = " + N + ", got " + npy_shape_str(a.shape));
    d.features.rows = a.shape[0];
    d.features.cols = a.shape[1];
    d.features.format = FeatureFormat::Dense;
    d.features.dense = a.as<float>();
    for (size_t i = 0; i < d.features.dense.size(); ++i) {
      if (!std::isfinite(d.features.dense[i]))
        fail("attr_matrix", "holds a non-finite value at [" + std::to_string(i / static_cast<size_t>(a.shape[1])) +
                                ", " + std::to_string(i % static_cast<size_t>(a.shape[1])) +
                                "] (features must be finite)");
    }
    apply_feature_format(d.features, options, where);
  }

  if (archive.contains("labels")) {
    used.insert("labels");
    NpyArray a = archive.read("labels");
    if (!((a.shape.size() == 1 && a.shape[0] == d.num_nodes) ||
          (a.shape.size() == 2 && a.shape[0] == d.num_nodes && a.shape[1] == 1)))
      fail("labels", "must have shape (N,) with N = " + N + ", got " + npy_shape_str(a.shape));
    d.labels = a.as<int64_t>();
  } else if (archive.contains("labels_indptr") || archive.contains("labels_data")) {
    // One-hot labels as a CSR matrix: exactly one entry per row.
    const CompressedParts m = read_compressed(file, archive, "labels_", false);
    used.insert({"labels_data", "labels_indices", "labels_indptr", "labels_shape"});
    if (m.outer != d.num_nodes) fail("labels_shape", "must have N = " + N + " rows, got " + std::to_string(m.outer));
    d.labels.resize(static_cast<size_t>(m.outer));
    for (int64_t r = 0; r < m.outer; ++r) {
      const int64_t begin = m.indptr[static_cast<size_t>(r)], count = m.indptr[static_cast<size_t>(r) + 1] - begin;
      if (count != 1)
        fail("labels_indptr",
             "gives node " + std::to_string(r) + " " + std::to_string(count) +
                 " labels (one-hot labels need exactly one per node; multi-label data is not supported)");
      d.labels[static_cast<size_t>(r)] = m.indices[static_cast<size_t>(begin)];
    }
  }
  d.num_classes = infer_num_classes(d.labels, d.num_nodes, where + ": key 'labels'");

  if (d.features.cols == 0 && !used.count("attr_matrix") && !used.count("attr_data")) add_degree_features(d, options);
  if (d.labels.empty())
    add_note(d, "no labels in the file: no classes and no split");
  else
    add_random_split(d, options.split_seed);
  std::string skipped;
  for (const std::string& k : archive.keys()) {
    if (!used.count(k)) skipped += (skipped.empty() ? "" : ", ") + k;
  }
  if (!skipped.empty())
    add_note(d, "not read (names, text or object arrays are not needed and never unpickled): " + skipped);
  validate_loaded(d, where);
  return d;
}

}  // namespace edgewise::gnn::formats
