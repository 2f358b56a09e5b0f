// The one way a string becomes data. A spec names a dataset file or folder (a path,
// or a name looked up in the data directory), a generator ("synthetic",
// "synthetic:N", "rmat:N:E:F[:K]") or "auto"; one registry of readers — for node
// datasets and graph collections alike — says which reader a file or folder needs.
// load_dataset (a file), load_dataset_spec (node data) and load_graph_dataset (graph
// collections, graph_dataset.hpp) are typed front doors on these two.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/graph_dataset.hpp"

namespace edgewise::gnn {

// The numbers of an "rmat:N:E:F[:K]" spec (K default 16).
struct RmatSpec {
  int64_t num_nodes = 0, num_edges = 0, num_features = 0, num_classes = 16;
};

struct DatasetSpec {
  enum class Kind {
    Auto,       // "auto": cora (node) / reddit_threads (graph) when the data dir has it, else synthetic
    Synthetic,  // "synthetic" or "synthetic:N" (N nodes of the planted partition, or N graphs)
    Rmat,       // "rmat:N:E:F[:K]" (node data)
    File,       // anything else: a path, or a name looked up in default_data_dir()
  };
  Kind kind = Kind::Auto;
  std::string text;                   // the spec as given
  std::optional<int64_t> size;        // Synthetic: N when given
  RmatSpec rmat;                      // Rmat
};

// Parses `spec` whole: "synthetic:2x", "rmat:100:1e3:4" or an empty spec are
// std::invalid_argument naming the spec and the bad field (never read by prefix).
DatasetSpec parse_dataset_spec(std::string_view spec);
// std::nullopt unless `spec` starts with "rmat:"; else parse_dataset_spec's rmat part.
std::optional<RmatSpec> parse_rmat_spec(const std::string& spec);

// What a reader reads.
enum class DataKind { Node, Graph };

// One entry of the registry: a file or folder layout, how it is recognised and its reader.
struct DatasetReader {
  const char* name;         // "ogb-npz", "gnn-benchmark", "scipy-sparse", "ogb-raw", "edge-list", "graph-npz", "tu"
  DataKind kind;
  const char* recognised_by;  // for messages and documentation
};

// Every reader, in the order they are tried for a path.
const std::vector<DatasetReader>& dataset_readers();

// The reader of kind `kind` that `path` needs (DataFileError naming the path when none).
const DatasetReader& reader_for(const std::filesystem::path& path, DataKind kind);

// The file or folder a name or path of kind `kind` means: a path (contains a '/',
// ends in ".npz", or names an existing file or folder) as is; a name such as "cora",
// "CiteSeer", "amazon-photo" (lower-cased, '-' read as '_') is
// <default_data_dir()>/<name>.npz, or for graph collections also the TU folder
// <default_data_dir()>/<name>. DataFileError saying where it looked otherwise.
std::filesystem::path resolve_dataset_path(std::string_view name_or_path, DataKind kind);

struct ResolvedDataset {
  Dataset dataset;
  std::string description;  // what was loaded and why (e.g. "no cora.npz in ...: synthetic")
  // What the data is, the same however the spec named it: "file <canonical path>",
  // "synthetic:<nodes>" or the rmat spec (a checkpoint records it).
  std::string identity;
};

// Node data from any spec; `options` applies to datasets read from files (edge
// conventions, node cap), `synthetic_nodes` to "synthetic" without a size.
ResolvedDataset load_dataset_spec(const std::string& spec, int64_t synthetic_nodes = 2708,
                                  const LoadOptions& options = {});

}  // namespace edgewise::gnn
