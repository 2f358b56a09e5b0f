// Dataset specs shared by edgewise-train and the Python train(): names, paths, generators.
#include "edgewise/gnn/data/dataset_spec.hpp"

#include <charconv>
#include <filesystem>
#include <vector>

#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

std::optional<RmatSpec> parse_rmat_spec(const std::string& spec) {
  if (spec.rfind("rmat:", 0) != 0) return std::nullopt;
  std::vector<int64_t> parts;
  for (size_t at = 5;;) {
    const size_t colon = std::min(spec.find(':', at), spec.size());
    const std::string_view item(spec.data() + at, colon - at);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    EW_REQUIRE(!item.empty() && ec == std::errc() && end == item.data() + item.size(), "dataset: '", spec,
               "' is not rmat:N:E:F[:K] ('", item, "' is not a whole integer)");
    parts.push_back(value);
    if (colon == spec.size()) break;
    at = colon + 1;
  }
  EW_REQUIRE(parts.size() == 3 || parts.size() == 4, "dataset: '", spec, "' must be rmat:N:E:F[:K] (got ",
             parts.size(), " numbers)");
  RmatSpec r{parts[0], parts[1], parts[2], parts.size() == 4 ? parts[3] : 16};
  EW_REQUIRE(r.num_nodes >= 1 && r.num_nodes <= kMaxNodes, "dataset: '", spec, "': N (", r.num_nodes,
             ") must lie in [1, 2^31 - 1]");
  EW_REQUIRE(r.num_edges >= 0, "dataset: '", spec, "': E (", r.num_edges, ") must be >= 0");
  EW_REQUIRE(r.num_features >= 0, "dataset: '", spec, "': F (", r.num_features, ") must be >= 0");
  EW_REQUIRE(r.num_classes >= 1, "dataset: '", spec, "': K (", r.num_classes, ") must be >= 1");
  return r;
}

ResolvedDataset load_dataset_spec(const std::string& spec, int64_t synthetic_nodes, const LoadOptions& options) {
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
  if (const std::optional<RmatSpec> rmat = parse_rmat_spec(name)) {
    RmatOptions o;
    o.num_features = rmat->num_features;
    o.num_classes = rmat->num_classes;
    r.dataset = rmat_graph(rmat->num_nodes, rmat->num_edges, 0.57, 0.19, 0.19, 1, o);
    r.description += "a synthetic R-MAT graph (" + spec + ")";
    r.identity = name;
    return r;
  }
  if (name == "synthetic") {
    PlantedPartitionParams params;
    params.num_nodes = synthetic_nodes;
    r.dataset = planted_partition(params, 12345);
    r.description += "the built-in synthetic planted-partition graph";
    r.identity = "synthetic:" + std::to_string(synthetic_nodes);
    return r;
  }
  r.dataset = load_dataset(name, options);
  const std::filesystem::path path = resolve_dataset_path(name);
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  r.identity = "file " + (ec ? path : canonical).string();
  r.description += "dataset " + r.dataset.name + " (" + path.string() + ")";
  if (!r.dataset.note.empty()) r.description += "; " + r.dataset.note;
  return r;
}

}  // namespace edgewise::gnn
