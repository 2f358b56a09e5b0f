// One string names any dataset the tools can train on: a name in the data directory
// ("cora"), a path to an .npz, "synthetic" (the planted-partition default),
// "rmat:N:E:F[:K]" (an R-MAT graph with F random features and K classes), or
// "auto" (cora when the data directory has it, else synthetic).
#pragma once

#include <string>

#include "edgewise/gnn/dataset.hpp"

namespace edgewise::gnn {

struct ResolvedDataset {
  Dataset dataset;
  std::string description;  // what was loaded and why (e.g. "no cora.npz in ...: synthetic")
};

ResolvedDataset load_dataset_spec(const std::string& spec, int64_t synthetic_nodes = 2708);

}  // namespace edgewise::gnn
