// Plain edge lists: "src,dst" or "src dst" per line, comments, an optional header.
#include "data/formats/formats.hpp"
#include "data/formats/text_lines.hpp"

namespace edgewise::gnn::formats {

namespace {

// Ids beyond this are taken for a corrupt file (N = largest id + 1 nodes get allocated).
constexpr int64_t kMaxNodeId = (int64_t{1} << 32) - 1;

}  // namespace

Dataset load_edge_list(const std::filesystem::path& file, const LoadOptions& options) {
  TextLines lines(file.string());
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t max_id = -1;
  bool seen_data = false;
  for (std::string line; lines.next(line);) {
    if (is_blank_or_comment(line)) continue;
    const std::vector<std::string_view> fields = split_fields(line);
    int64_t u = 0, v = 0;
    const bool ok = fields.size() >= 2 && parse_int(fields[0], u) && parse_int(fields[1], v);
    if (!ok) {
      const bool header = !seen_data && !fields.empty() && !parse_int(fields[0], u);
      seen_data = true;
      if (header) continue;  // a header line such as "src,dst"
      lines.fail("expected two node ids (integers >= 0) separated by ',' or spaces, got '" + line + "'");
    }
    seen_data = true;
    if (u < 0 || v < 0 || u > kMaxNodeId || v > kMaxNodeId)
      lines.fail("node id " + std::to_string(u < 0 || u > kMaxNodeId ? u : v) + " is outside [0, 2^32 - 1]");
    max_id = std::max({max_id, u, v});
    pairs.emplace_back(u, v);
  }
  Dataset d;
  std::filesystem::path stem = file.filename();
  if (stem.extension() == ".gz") stem = stem.stem();
  d.name = stem.stem().string();
  d.num_nodes = max_id + 1;
  d.edge_index = edges_from_pairs(std::move(pairs));
  add_note(d, "an edge list: " + std::to_string(d.num_nodes) + " nodes (largest id + 1)");
  add_degree_features(d, options);
  add_note(d, "no labels, so no classes and no split");
  validate_loaded(d, "'" + file.string() + "'");
  return d;
}

}  // namespace edgewise::gnn::formats
