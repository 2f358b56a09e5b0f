// scipy.sparse.save_npz files (csr, csc or coo) read as a graph's adjacency matrix.
#include "data/formats/formats.hpp"

namespace edgewise::gnn::formats {

Dataset load_scipy_sparse_npz(const std::string& file, const NpzArchive& archive, const LoadOptions& options) {
  const std::string where = "npz '" + file + "'";
  const std::string format = read_npz_text_scalar(archive, "format");
  Dataset d;
  d.name = std::filesystem::path(file).stem().string();
  if (format == "csr" || format == "csc") {
    const bool csc = format == "csc";
    const CompressedParts m = read_compressed(file, archive, "", csc);
    if (m.outer != m.inner)
      throw DataFileError(where + ": key 'shape' must be square (an adjacency matrix), got (" +
                          std::to_string(csc ? m.inner : m.outer) + ", " + std::to_string(csc ? m.outer : m.inner) +
                          ")");
    require_node_count(m.outer, options, where, "key 'shape'");
    d.num_nodes = m.outer;
    d.edge_index = edges_from_compressed(m, csc);
  } else if (format == "coo") {
    for (const char* key : {"row", "col", "data", "shape"}) {
      if (!archive.contains(key))
        throw DataFileError(where + ": required key '" + key +
                            "' is missing (a coo matrix needs row, col, data, shape)");
    }
    const std::vector<int64_t> shape = archive.read("shape").as<int64_t>();
    if (shape.size() != 2 || shape[0] != shape[1] || shape[0] < 0)
      throw DataFileError(where + ": key 'shape' must be square (an adjacency matrix) of sizes >= 0");
    require_node_count(shape[0], options, where, "key 'shape'");
    const std::vector<int64_t> row = archive.read("row").as<int64_t>(), col = archive.read("col").as<int64_t>();
    const std::vector<float> data = archive.read("data").as<float>();
    if (col.size() != row.size() || data.size() != row.size())
      throw DataFileError(where + ": keys 'row', 'col', 'data' must have equal lengths, got " +
                          std::to_string(row.size()) + ", " + std::to_string(col.size()) + ", " +
                          std::to_string(data.size()));
    std::vector<std::pair<int64_t, int64_t>> pairs;
    pairs.reserve(row.size());
    for (size_t k = 0; k < row.size(); ++k) {
      for (const auto& [key, v] : {std::pair<const char*, int64_t>{"row", row[k]}, {"col", col[k]}}) {
        if (v < 0 || v >= shape[0])
          throw DataFileError(where + ": key '" + key + "' holds " + key + "[" + std::to_string(k) + "] (" +
                              std::to_string(v) + ") outside [0, " + std::to_string(shape[0]) + ")");
      }
      if (data[k] != 0.0f) pairs.emplace_back(row[k], col[k]);
    }
    d.num_nodes = shape[0];
    d.edge_index = edges_from_pairs(std::move(pairs));
  } else {
    throw DataFileError(where + ": key 'format' is '" + format + "'; only csr, csc and coo matrices are read");
  }
  apply_edge_conventions(d, EdgeConvention{}, options, where);
  add_degree_features(d, options);
  add_note(d, "a scipy.sparse adjacency matrix: no labels, so no classes and no split");
  validate_loaded(d, where);
  return d;
}

}  // namespace edgewise::gnn::formats
