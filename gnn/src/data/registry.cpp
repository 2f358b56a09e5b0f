// The registry of dataset readers — node datasets and graph collections in one list —
// and the front doors that read a resolved file with the reader it needs.
#include <fstream>
#include <functional>
#include <system_error>

#include "data/formats/formats.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// What a path holds, looked at once for every reader's test.
struct Probe {
  std::filesystem::path path;
  bool directory = false;
  bool tu_prefix = false;  // <prefix>_A.txt exists (a TU collection named by its prefix)
  bool zip = false;
  std::vector<std::string> keys;  // of the archive, when it is one
  bool has(const char* key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }
};

Probe probe(const std::filesystem::path& path) {
  Probe p;
  p.path = path;
  std::error_code ec;
  p.directory = std::filesystem::is_directory(path, ec);
  p.tu_prefix = std::filesystem::is_regular_file(path.string() + "_A.txt", ec);
  if (p.directory || p.tu_prefix) return p;
  char magic[2] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(magic, 2);
  p.zip = in.gcount() == 2 && magic[0] == 'P' && magic[1] == 'K';
  if (p.zip) p.keys = NpzArchive::open(path.string()).keys();
  return p;
}

struct Entry {
  DatasetReader info;
  std::function<bool(const Probe&)> matches;
  std::function<Dataset(const Probe&, const LoadOptions&)> read_node;  // Node readers
  std::function<GraphDataset(const Probe&)> read_graph;                 // Graph readers
};

const std::vector<Entry>& entries() {
  using namespace formats;
  static const std::vector<Entry> list = {
      {{"ogb-npz", DataKind::Node, ".npz with num_nodes and edge_index (the bundled layout)"},
       [](const Probe& p) { return p.zip && p.has("num_nodes") && p.has("edge_index"); },
       [](const Probe& p, const LoadOptions& o) { return load_ogb_npz(p.path.string(), o); },
       nullptr},
      {{"gnn-benchmark", DataKind::Node, ".npz with adj_indptr / adj_data (Shchur et al.)"},
       [](const Probe& p) { return p.zip && (p.has("adj_indptr") || p.has("adj_data")); },
       [](const Probe& p, const LoadOptions& o) {
         return load_gnn_benchmark_npz(p.path.string(), NpzArchive::open(p.path.string()), o);
       },
       nullptr},
      {{"scipy-sparse", DataKind::Node, ".npz with format and shape (scipy.sparse.save_npz)"},
       [](const Probe& p) { return p.zip && p.has("format") && p.has("shape"); },
       [](const Probe& p, const LoadOptions& o) {
         return load_scipy_sparse_npz(p.path.string(), NpzArchive::open(p.path.string()), o);
       },
       nullptr},
      {{"ogb-raw", DataKind::Node, "a folder with raw/edge.csv(.gz) (an OGB raw dataset)"},
       [](const Probe& p) { return p.directory; },
       [](const Probe& p, const LoadOptions& o) { return load_ogb_raw_folder(p.path, o); },
       nullptr},
      {{"edge-list", DataKind::Node, "any other file: src,dst[,weight] lines"},
       [](const Probe& p) { return !p.zip && !p.directory && p.path.extension() != ".npz"; },
       [](const Probe& p, const LoadOptions& o) { return load_edge_list(p.path, o); },
       nullptr},
      {{"graph-npz", DataKind::Graph, ".npz with num_nodes_list and graph_label (reddit_threads)"},
       [](const Probe& p) { return !p.directory && !p.tu_prefix; },
       nullptr,
       [](const Probe& p) { return load_graph_npz(p.path.string()); }},
      {{"tu", DataKind::Graph, "a TU folder or prefix (<DS>_A.txt, _graph_indicator, _graph_labels)"},
       [](const Probe& p) { return p.directory || p.tu_prefix; },
       nullptr,
       [](const Probe& p) { return load_tu_dataset(p.path); }},
  };
  return list;
}

const Entry& entry_for(const Probe& p, DataKind kind) {
  for (const Entry& e : entries())
    if (e.info.kind == kind && e.matches(p)) return e;
  // A file named .npz that is not a ZIP, or whose keys fit no layout: the OGB npz
  // reader's errors list what it holds (node data); graph data always has a reader.
  if (kind == DataKind::Node && p.zip && p.has("adj_matrix"))
    throw DataFileError("npz '" + p.path.string() +
                        "': key 'adj_matrix' is a pickled scipy matrix (the GraphGallery layout), and pickles are "
                        "never unpickled; save its arrays as gnn-benchmark keys (adj_data, adj_indices, adj_indptr, "
                        "adj_shape, attr_..., labels) or the matrix with scipy.sparse.save_npz");
  return entries().front();
}

}  // namespace

const std::vector<DatasetReader>& dataset_readers() {
  static const std::vector<DatasetReader> list = [] {
    std::vector<DatasetReader> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return list;
}

const DatasetReader& reader_for(const std::filesystem::path& path, DataKind kind) {
  return entry_for(probe(path), kind).info;
}

Dataset load_dataset(std::string_view name_or_path, const LoadOptions& options) {
  EW_REQUIRE(options.sparse_threshold >= 0 && options.sparse_threshold <= 1,
             "load_dataset: sparse_threshold (", options.sparse_threshold, ") must lie in [0, 1]");
  EW_REQUIRE(options.max_nodes >= 0 && options.max_nodes <= kMaxNodes, "load_dataset: max_nodes (", options.max_nodes,
             ") must lie in [0, 2^31 - 1]");
  const Probe p = probe(resolve_dataset_path(name_or_path, DataKind::Node));
  return entry_for(p, DataKind::Node).read_node(p, options);
}

GraphDataset load_graph_dataset(std::string_view spec, uint64_t seed) {
  const DatasetSpec s = parse_dataset_spec(spec);
  GraphDataset d;
  if (s.kind == DatasetSpec::Kind::Synthetic) {
    SyntheticGraphsParams params;
    if (s.size) params.num_graphs = *s.size;
    d = synthetic_graph_dataset(params, seed);
  } else {
    EW_REQUIRE(s.kind == DatasetSpec::Kind::File, "load_graph_dataset: '", spec,
               "' names node data (auto and rmat: are resolved by the tools); pass a graph collection");
    const Probe p = probe(resolve_dataset_path(s.text, DataKind::Graph));
    d = entry_for(p, DataKind::Graph).read_graph(p);
  }
  if (d.num_features == 0) add_one_hot_degree_features(d);
  return d;
}

}  // namespace edgewise::gnn
