// The TU graph-collection format (Morris et al., TUDataset): 1-based global node
// ids in <DS>_A.txt, a graph id per node in <DS>_graph_indicator.txt, a label per
// graph in <DS>_graph_labels.txt, optional node labels and attributes.
#include <algorithm>
#include <cmath>
#include <map>
#include <system_error>

#include "data/formats/text_lines.hpp"
#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"

namespace edgewise::gnn {

namespace {

using formats::TextLines;

// Ids beyond this are taken for a corrupt file (node counts are int32 in graphs).
constexpr int64_t kMaxId = (int64_t{1} << 31) - 1;
// Node labels become a one-hot up to this many distinct values; beyond it (an
// N x c matrix from a small file) one column holds the label's index instead.
constexpr int64_t kMaxOneHotNodeLabels = 1024;

// One integer per data line (blank lines skipped), from the first field.
std::vector<int64_t> read_integers(const std::string& path) {
  TextLines lines(path);
  std::vector<int64_t> out;
  for (std::string line; lines.next(line);) {
    if (formats::is_blank_or_comment(line)) continue;
    const std::vector<std::string_view> fields = formats::split_fields(line);
    int64_t v = 0;
    if (fields.empty() || !formats::parse_int(fields[0], v))
      lines.fail("expected an integer, got '" + line + "'");
    out.push_back(v);
  }
  return out;
}

// Integer values -> 0..C-1 in ascending order of value.
int64_t compact_labels(std::vector<int64_t>& values) {
  std::map<int64_t, int64_t> index;
  for (int64_t v : values) index.emplace(v, 0);
  int64_t next = 0;
  for (auto& [value, id] : index) id = next++;
  for (int64_t& v : values) v = index[v];
  return next;
}

struct Prefix {
  std::filesystem::path base;  // "<dir>/<DS>"
  std::string name;
  std::string file(const std::string& suffix) const { return base.string() + "_" + suffix + ".txt"; }
};

Prefix resolve_prefix(const std::filesystem::path& location) {
  std::error_code ec;
  if (std::filesystem::is_directory(location, ec)) {
    std::filesystem::path dir = location;
    std::string name = dir.filename().string();
    if (name.empty()) name = dir.parent_path().filename().string();  // "dir/" spelled with a slash
    return {dir / name, name};
  }
  return {location, location.filename().string()};
}

}  // namespace

GraphDataset load_tu_dataset(const std::filesystem::path& location) {
  const Prefix prefix = resolve_prefix(location);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(prefix.file("A"), ec))
    throw DataFileError("TU dataset '" + location.string() + "': no file '" + prefix.file("A") +
                        "' (expected <DS>_A.txt, <DS>_graph_indicator.txt and <DS>_graph_labels.txt)");
  GraphDataset d;
  d.name = prefix.name;

  // Graph labels define G.
  d.labels = read_integers(prefix.file("graph_labels"));
  const int64_t g_count = static_cast<int64_t>(d.labels.size());
  if (g_count == 0) throw DataFileError("'" + prefix.file("graph_labels") + "': no graph labels");
  d.num_classes = compact_labels(d.labels);

  // Graph indicator: node i (1-based line order) belongs to graph indicator[i].
  std::vector<int64_t> graph_of;  // 0-based
  {
    TextLines lines(prefix.file("graph_indicator"));
    int64_t previous = 1;
    for (std::string line; lines.next(line);) {
      if (formats::is_blank_or_comment(line)) continue;
      const std::vector<std::string_view> fields = formats::split_fields(line);
      int64_t g = 0;
      if (fields.size() != 1 || !formats::parse_int(fields[0], g))
        lines.fail("expected one graph id, got '" + line + "'");
      if (g < 1 || g > g_count)
        lines.fail("graph id " + std::to_string(g) + " is outside [1, " + std::to_string(g_count) +
                   "] (the graphs of " + prefix.file("graph_labels") + ")");
      if (g < previous)
        lines.fail("graph id " + std::to_string(g) + " after " + std::to_string(previous) +
                   ": the nodes of each graph must be consecutive, graphs in ascending order");
      previous = g;
      graph_of.push_back(g - 1);
      if (static_cast<int64_t>(graph_of.size()) > kMaxId) lines.fail("too many nodes");
    }
  }
  const int64_t n_total = static_cast<int64_t>(graph_of.size());
  d.node_offsets.assign(static_cast<size_t>(g_count + 1), 0);
  for (int64_t g : graph_of) ++d.node_offsets[static_cast<size_t>(g + 1)];
  // Every labelled graph needs nodes: an id skipped by the indicator is a graph without any.
  for (int64_t g = 0; g < g_count; ++g) {
    if (d.node_offsets[static_cast<size_t>(g + 1)] == 0)
      throw DataFileError("'" + prefix.file("graph_indicator") + "': graph " + std::to_string(g + 1) +
                          " (of the " + std::to_string(g_count) + " in " + prefix.file("graph_labels") +
                          ") has no nodes (the indicator skips its id)");
  }
  for (int64_t g = 0; g < g_count; ++g) d.node_offsets[g + 1] += d.node_offsets[g];

  // Edges: bucketed by graph (stable), ids made local.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  {
    TextLines lines(prefix.file("A"));
    for (std::string line; lines.next(line);) {
      if (formats::is_blank_or_comment(line)) continue;
      const std::vector<std::string_view> fields = formats::split_fields(line);
      int64_t u = 0, v = 0;
      if (fields.size() != 2 || !formats::parse_int(fields[0], u) || !formats::parse_int(fields[1], v))
        lines.fail("expected two node ids 'i, j', got '" + line + "'");
      if (u < 1 || u > n_total || v < 1 || v > n_total)
        lines.fail("node id " + std::to_string(u < 1 || u > n_total ? u : v) + " is outside [1, " +
                   std::to_string(n_total) + "] (the nodes of " + prefix.file("graph_indicator") + ")");
      if (graph_of[static_cast<size_t>(u - 1)] != graph_of[static_cast<size_t>(v - 1)])
        lines.fail("edge " + std::to_string(u) + " -> " + std::to_string(v) + " joins graphs " +
                   std::to_string(graph_of[static_cast<size_t>(u - 1)] + 1) + " and " +
                   std::to_string(graph_of[static_cast<size_t>(v - 1)] + 1));
      pairs.emplace_back(u - 1, v - 1);
    }
  }
  d.edge_offsets.assign(static_cast<size_t>(g_count + 1), 0);
  for (const auto& [u, v] : pairs) ++d.edge_offsets[static_cast<size_t>(graph_of[static_cast<size_t>(u)] + 1)];
  for (int64_t g = 0; g < g_count; ++g) d.edge_offsets[g + 1] += d.edge_offsets[g];
  d.src.resize(pairs.size());
  d.dst.resize(pairs.size());
  std::vector<int64_t> cursor(d.edge_offsets.begin(), d.edge_offsets.end() - 1);
  for (const auto& [u, v] : pairs) {
    const int64_t g = graph_of[static_cast<size_t>(u)];
    const int64_t at = cursor[static_cast<size_t>(g)]++;
    d.src[static_cast<size_t>(at)] = static_cast<int32_t>(u - d.node_offsets[g]);
    d.dst[static_cast<size_t>(at)] = static_cast<int32_t>(v - d.node_offsets[g]);
  }

  // Optional node attributes (floats) then node labels (one-hot).
  std::vector<std::vector<float>> blocks;
  std::vector<int64_t> widths;
  int64_t labels_as_index = 0;  // distinct node labels, when too many for a one-hot
  if (std::filesystem::is_regular_file(prefix.file("node_attributes"), ec)) {
    TextLines lines(prefix.file("node_attributes"));
    std::vector<float> values;
    int64_t width = -1, rows = 0;
    for (std::string line; lines.next(line);) {
      if (formats::is_blank_or_comment(line)) continue;
      const std::vector<std::string_view> fields = formats::split_fields(line);
      if (width < 0) width = static_cast<int64_t>(fields.size());
      if (static_cast<int64_t>(fields.size()) != width)
        lines.fail(std::to_string(fields.size()) + " attributes, the first line has " + std::to_string(width));
      for (std::string_view f : fields) {
        float x = 0;
        if (!formats::parse_float(f, x) || !std::isfinite(x))
          lines.fail("attribute '" + std::string(f) + "' is not a finite number");
        values.push_back(x);
      }
      ++rows;
    }
    if (rows != n_total)
      throw DataFileError("'" + prefix.file("node_attributes") + "': " + std::to_string(rows) + " lines for " +
                          std::to_string(n_total) + " nodes");
    blocks.push_back(std::move(values));
    widths.push_back(width);
  }
  if (std::filesystem::is_regular_file(prefix.file("node_labels"), ec)) {
    std::vector<int64_t> node_labels = read_integers(prefix.file("node_labels"));
    if (static_cast<int64_t>(node_labels.size()) != n_total)
      throw DataFileError("'" + prefix.file("node_labels") + "': " + std::to_string(node_labels.size()) +
                          " labels for " + std::to_string(n_total) + " nodes");
    const int64_t c = compact_labels(node_labels);
    if (c <= kMaxOneHotNodeLabels) {
      std::vector<float> one_hot(static_cast<size_t>(n_total * c), 0.0f);
      for (int64_t i = 0; i < n_total; ++i) one_hot[static_cast<size_t>(i * c + node_labels[i])] = 1.0f;
      blocks.push_back(std::move(one_hot));
      widths.push_back(c);
    } else {  // one column holding the label's index, not an N x c one-hot
      blocks.emplace_back(node_labels.begin(), node_labels.end());
      widths.push_back(1);
      labels_as_index = c;
    }
  }
  for (int64_t w : widths) d.num_features += w;
  d.features.assign(static_cast<size_t>(n_total * d.num_features), 0.0f);
  int64_t column = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int64_t i = 0; i < n_total; ++i)
      std::copy_n(blocks[b].begin() + i * widths[b], widths[b], d.features.begin() + i * d.num_features + column);
    column += widths[b];
  }
  if (d.num_features > 0) {
    const bool has_labels = std::filesystem::is_regular_file(prefix.file("node_labels"), ec);
    const std::string label_text = labels_as_index > 0 ? "node labels as an index column" : "one-hot node labels";
    d.note = "node features: " + (widths.size() == 2 ? "attributes and " + label_text
                                  : has_labels        ? label_text
                                                      : std::string("attributes"));
    if (labels_as_index > 0)
      d.note += " (" + std::to_string(labels_as_index) + " distinct node labels, more than the " +
                std::to_string(kMaxOneHotNodeLabels) + " a one-hot holds)";
  }
  try {
    d.validate();
  } catch (const std::invalid_argument& e) {
    throw DataFileError("TU dataset '" + location.string() + "': " + e.what());
  }
  return d;
}

}  // namespace edgewise::gnn
