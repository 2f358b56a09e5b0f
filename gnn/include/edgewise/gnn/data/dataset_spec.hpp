// One string names any dataset the tools can train on: a name in the data directory
// ("cora"), a path to an .npz, "synthetic" (the planted-partition default),
// "rmat:N:E:F[:K]" (an R-MAT graph with F random features and K classes), or
// "auto" (cora when the data directory has it, else synthetic).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "edgewise/gnn/data/dataset.hpp"

namespace edgewise::gnn {

struct ResolvedDataset {
  Dataset dataset;
  std::string description;  // what was loaded and why (e.g. "no cora.npz in ...: synthetic")
  // What the data is, the same however the spec named it: "file <canonical path>",
  // "synthetic:<nodes>" or the rmat spec (a checkpoint records it).
  std::string identity;
};

// The numbers of an "rmat:N:E:F[:K]" spec (K default 16).
struct RmatSpec {
  int64_t num_nodes = 0, num_edges = 0, num_features = 0, num_classes = 16;
};
// std::nullopt when `spec` does not start with "rmat:"; otherwise the parsed spec,
// every field a whole decimal integer (N >= 1, E >= 0, F >= 0, K >= 1), else
// std::invalid_argument naming the spec and the bad field ("rmat:100:1e3:4" is
// refused, not read as E = 1).
std::optional<RmatSpec> parse_rmat_spec(const std::string& spec);

// `options` applies to datasets read from files (edge conventions, node cap).
ResolvedDataset load_dataset_spec(const std::string& spec, int64_t synthetic_nodes = 2708,
                                  const LoadOptions& options = {});

}  // namespace edgewise::gnn
