// Dataset specs: the parser, and node data from any spec (generators or files).
#include "edgewise/gnn/data/dataset_spec.hpp"

#include <charconv>
#include <filesystem>
#include <vector>

#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// The whole of `item` as a decimal integer, else std::invalid_argument naming it.
int64_t whole_integer(std::string_view spec, std::string_view item, const char* form) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
  EW_REQUIRE(!item.empty() && ec == std::errc() && end == item.data() + item.size(), "dataset: '", spec, "' is not ",
             form, " ('", item, "' is not a whole integer)");
  return value;
}

}  // namespace

DatasetSpec parse_dataset_spec(std::string_view spec) {
  EW_REQUIRE(!spec.empty(), "dataset: the spec is empty (a name, a path, synthetic, rmat:N:E:F[:K] or auto)");
  DatasetSpec s;
  s.text = std::string(spec);
  if (spec == "auto") {
    s.kind = DatasetSpec::Kind::Auto;
  } else if (spec == "synthetic" || spec.starts_with("synthetic:")) {
    s.kind = DatasetSpec::Kind::Synthetic;
    if (spec.size() > 10) {
      s.size = whole_integer(spec, spec.substr(10), "synthetic[:N]");
      EW_REQUIRE(*s.size >= 1 && *s.size <= kMaxNodes, "dataset: '", spec, "': N (", *s.size,
                 ") must lie in [1, 2^31 - 1]");
    }
  } else if (spec.starts_with("rmat:")) {
    s.kind = DatasetSpec::Kind::Rmat;
    std::vector<int64_t> parts;
    for (size_t at = 5;;) {
      const size_t colon = std::min(spec.find(':', at), spec.size());
      parts.push_back(whole_integer(spec, spec.substr(at, colon - at), "rmat:N:E:F[:K]"));
      if (colon == spec.size()) break;
      at = colon + 1;
    }
    EW_REQUIRE(parts.size() == 3 || parts.size() == 4, "dataset: '", spec, "' must be rmat:N:E:F[:K] (got ",
               parts.size(), " numbers)");
    RmatSpec& r = s.rmat;
    r = {parts[0], parts[1], parts[2], parts.size() == 4 ? parts[3] : 16};
    EW_REQUIRE(r.num_nodes >= 1 && r.num_nodes <= kMaxNodes, "dataset: '", spec, "': N (", r.num_nodes,
               ") must lie in [1, 2^31 - 1]");
    EW_REQUIRE(r.num_edges >= 0, "dataset: '", spec, "': E (", r.num_edges, ") must be >= 0");
    EW_REQUIRE(r.num_features >= 0, "dataset: '", spec, "': F (", r.num_features, ") must be >= 0");
    EW_REQUIRE(r.num_classes >= 1, "dataset: '", spec, "': K (", r.num_classes, ") must be >= 1");
  } else {
    s.kind = DatasetSpec::Kind::File;
  }
  return s;
}

std::optional<RmatSpec> parse_rmat_spec(const std::string& spec) {
  if (!spec.starts_with("rmat:")) return std::nullopt;
  return parse_dataset_spec(spec).rmat;
}

ResolvedDataset load_dataset_spec(const std::string& spec_text, int64_t synthetic_nodes, const LoadOptions& options) {
  ResolvedDataset r;
  DatasetSpec spec = parse_dataset_spec(spec_text);
  if (spec.kind == DatasetSpec::Kind::Auto) {
    try {
      resolve_dataset_path("cora", DataKind::Node);
      spec = parse_dataset_spec("cora");
    } catch (const std::exception&) {
      spec = parse_dataset_spec("synthetic");
      r.description = "no cora.npz in " + default_data_dir().string() + " (set EDGEWISE_DATA_DIR), so ";
    }
  }
  switch (spec.kind) {
    case DatasetSpec::Kind::Rmat: {
      RmatOptions o;
      o.num_features = spec.rmat.num_features;
      o.num_classes = spec.rmat.num_classes;
      r.dataset = rmat_graph(spec.rmat.num_nodes, spec.rmat.num_edges, 0.57, 0.19, 0.19, 1, o);
      r.description += "a synthetic R-MAT graph (" + spec.text + ")";
      r.identity = spec.text;
      return r;
    }
    case DatasetSpec::Kind::Synthetic: {
      PlantedPartitionParams params;
      params.num_nodes = spec.size.value_or(synthetic_nodes);
      r.dataset = planted_partition(params, 12345);
      r.description += "the built-in synthetic planted-partition graph";
      r.identity = "synthetic:" + std::to_string(params.num_nodes);
      return r;
    }
    case DatasetSpec::Kind::Auto:
    case DatasetSpec::Kind::File: break;
  }
  const std::filesystem::path path = resolve_dataset_path(spec.text, DataKind::Node);
  r.dataset = load_dataset(path.string(), options);
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  r.identity = "file " + (ec ? path : canonical).string();
  r.description += "dataset " + r.dataset.name + " (" + path.string() + ")";
  if (!r.dataset.note.empty()) r.description += "; " + r.dataset.note;
  return r;
}

}  // namespace edgewise::gnn
