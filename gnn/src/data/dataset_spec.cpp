// Dataset specs shared by edgewise-train and the Python train(): names, paths, generators.
#include "edgewise/gnn/dataset_spec.hpp"

#include <sstream>
#include <vector>

#include "edgewise/gnn/synthetic.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

ResolvedDataset load_dataset_spec(const std::string& spec, int64_t synthetic_nodes) {
  ResolvedDataset r;
  std::string name = spec;
  if (name == "auto") {
    try {
      resolve_dataset_path("cora");
      name = "cora";
    } catch (const std::exception&) {
      name = "synthetic";
      r.description = "no cora.npz in " + default_data_dir().string() + " (set EDGEWISE_DATA_DIR), so ";
    }
  }
  if (name.rfind("rmat:", 0) == 0) {
    std::vector<int64_t> parts;
    std::stringstream fields(name.substr(5));
    for (std::string item; std::getline(fields, item, ':');) {
      try {
        parts.push_back(std::stoll(item));
      } catch (const std::exception&) {
        detail::throw_invalid_argument("dataset: '", spec, "' is not rmat:N:E:F[:K] (bad number '", item, "')");
      }
    }
    EW_REQUIRE(parts.size() == 3 || parts.size() == 4, "dataset: '", spec, "' must be rmat:N:E:F[:K]");
    RmatOptions options;
    options.num_features = parts[2];
    options.num_classes = parts.size() == 4 ? parts[3] : 16;
    r.dataset = rmat_graph(parts[0], parts[1], 0.57, 0.19, 0.19, 1, options);
    r.description += "a synthetic R-MAT graph (" + spec + ")";
    return r;
  }
  if (name == "synthetic") {
    PlantedPartitionParams params;
    params.num_nodes = synthetic_nodes;
    r.dataset = planted_partition(params, 12345);
    r.description += "the built-in synthetic planted-partition graph";
    return r;
  }
  r.dataset = load_dataset(name);
  r.description += "dataset " + r.dataset.name + " (" + resolve_dataset_path(name).string() + ")";
  if (!r.dataset.note.empty()) r.description += "; " + r.dataset.note;
  return r;
}

}  // namespace edgewise::gnn
