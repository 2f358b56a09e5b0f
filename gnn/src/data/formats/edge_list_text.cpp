// Plain edge lists: "src,dst[,weight]" or "src dst [weight]" per line, comments,
// an optional header line of names.
#include <cmath>

#include "data/formats/formats.hpp"
#include "data/formats/text_lines.hpp"

namespace edgewise::gnn::formats {

namespace {

// A header is the first data line when it names columns: none of its fields is a number.
bool is_header(const std::vector<std::string_view>& fields) {
  if (fields.empty()) return false;
  for (std::string_view f : fields)
    if (is_number(f)) return false;
  return true;
}

}  // namespace

Dataset load_edge_list(const std::filesystem::path& file, const LoadOptions& options) {
  const std::string where = "'" + file.string() + "'";
  TextLines lines(file.string());
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<float> weights;
  int64_t weighted_line = 0;  // the first data line; whether it has a weight decides for every line
  int64_t max_id = -1;
  bool seen_data = false;
  const int64_t max_id_allowed = options.max_nodes - 1;
  for (std::string line; lines.next(line);) {
    if (is_blank_or_comment(line)) continue;
    const std::vector<std::string_view> fields = split_fields(line);
    if (!seen_data) {
      seen_data = true;
      if (is_header(fields)) continue;  // e.g. "src,dst" or "source target weight"
    }
    if (weighted_line == 0) weighted_line = fields.size() == 3 ? lines.line_number() : -lines.line_number();
    if (fields.size() != 2 && fields.size() != 3)
      lines.fail("expected 'src,dst' or 'src,dst,weight' (node ids are integers >= 0), got " +
                 std::to_string(fields.size()) + " field(s): '" + line + "'");
    int64_t u = 0, v = 0;
    if (!parse_int(fields[0], u) || !parse_int(fields[1], v))
      lines.fail("expected two node ids (integers >= 0) separated by ',' or spaces, got '" + line + "'");
    if (u < 0 || v < 0) lines.fail("node id " + std::to_string(std::min(u, v)) + " is negative");
    if (u > max_id_allowed || v > max_id_allowed)
      lines.fail("node id " + std::to_string(std::max(u, v)) + " makes more nodes than the " +
                 std::to_string(options.max_nodes) + " allowed (LoadOptions::max_nodes; N = largest id + 1)");
    const bool weighted = weighted_line > 0;
    if ((fields.size() == 3) != weighted)
      lines.fail(std::string(weighted ? "has no weight, but" : "has a third column (a weight), but") + " line " +
                 std::to_string(weighted ? weighted_line : -weighted_line) + " " +
                 (weighted ? "has one" : "has none") + ": every edge needs one, or none does");
    if (weighted) {
      float w = 0;
      if (!parse_float(fields[2], w) || !std::isfinite(w))
        lines.fail("weight '" + std::string(fields[2]) + "' is not a finite number");
      weights.push_back(w);
    }
    max_id = std::max({max_id, u, v});
    pairs.emplace_back(u, v);
  }
  if (pairs.empty())
    throw DataFileError(where + ": holds no edges (" + std::to_string(lines.line_number()) +
                        " line(s), none an edge 'src,dst'): an edge list needs at least one");
  Dataset d;
  std::filesystem::path stem = file.filename();
  if (stem.extension() == ".gz") stem = stem.stem();
  d.name = stem.stem().string();
  d.num_nodes = max_id + 1;
  if (weights.empty()) {
    d.edge_index = edges_from_pairs(std::move(pairs));
  } else {
    d.edge_index = edges_from_weighted_pairs(std::move(pairs), std::move(weights), d.edge_weight);
  }
  add_note(d, "an edge list: " + std::to_string(d.num_nodes) + " nodes (largest id + 1)" +
                  (d.edge_weight.empty() ? "" : ", edge weights from the third column"));
  apply_edge_conventions(d, EdgeConvention{}, options, where);
  add_degree_features(d, options);
  add_note(d, "no labels, so no classes and no split");
  validate_loaded(d, where);
  return d;
}

}  // namespace edgewise::gnn::formats
