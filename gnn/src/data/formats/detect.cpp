// Picks the dataset reader from what a path holds.
#include <fstream>

#include "data/formats/formats.hpp"

namespace edgewise::gnn::formats {

DatasetFormat detect_format(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return DatasetFormat::OgbRawFolder;
  char magic[2] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(magic, 2);
  const bool zip = in.gcount() == 2 && magic[0] == 'P' && magic[1] == 'K';
  // A file named .npz that is not a ZIP gets the npz reader's own error.
  if (!zip) return path.extension() == ".npz" ? DatasetFormat::OgbNpz : DatasetFormat::EdgeList;
  const NpzArchive archive = NpzArchive::open(path.string());
  if (archive.contains("num_nodes") && archive.contains("edge_index")) return DatasetFormat::OgbNpz;
  if (archive.contains("adj_indptr") || archive.contains("adj_data")) return DatasetFormat::GnnBenchmarkNpz;
  if (archive.contains("format") && archive.contains("shape")) return DatasetFormat::ScipySparseNpz;
  if (archive.contains("adj_matrix"))
    throw DataFileError("npz '" + path.string() +
                        "': key 'adj_matrix' is a pickled scipy matrix (the GraphGallery layout), and pickles are "
                        "never unpickled; save its arrays as gnn-benchmark keys (adj_data, adj_indices, adj_indptr, "
                        "adj_shape, attr_..., labels) or the matrix with scipy.sparse.save_npz");
  return DatasetFormat::OgbNpz;  // whose missing-key error lists what the file holds
}

}  // namespace edgewise::gnn::formats
