// OGB's raw node-property dataset folders: raw/*.csv.gz plus split/<name>/*.csv.gz.
#include <algorithm>
#include <cmath>

#include "data/formats/formats.hpp"
#include "data/formats/text_lines.hpp"

namespace edgewise::gnn::formats {

namespace {

namespace fs = std::filesystem;

// <dir>/<name>.csv.gz, else <dir>/<name>.csv, else empty.
fs::path find_csv(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  for (const char* ext : {".csv.gz", ".csv"}) {
    const fs::path p = dir / (name + ext);
    if (fs::is_regular_file(p, ec)) return p;
  }
  return {};
}

// One integer per line (the first field); "nan" (allowed when `nan_rows` is given)
// as placeholder 0, marked in *nan_rows.
std::vector<int64_t> read_int_column(const fs::path& file, std::vector<bool>* nan_rows = nullptr) {
  TextLines lines(file.string());
  std::vector<int64_t> values;
  for (std::string line; lines.next(line);) {
    if (is_blank_or_comment(line)) continue;
    const auto fields = split_fields(line);
    int64_t v = 0;
    if (fields.empty() || !parse_int(fields[0], v)) {
      if (nan_rows && !fields.empty() && (fields[0] == "nan" || fields[0] == "NaN")) {
        nan_rows->resize(values.size() + 1, false);
        nan_rows->back() = true;
        v = 0;  // placeholder class of an unlabelled node
      } else {
        float f = 0;  // OGB writes some labels as "3.0"
        if (fields.empty() || !parse_float(fields[0], f) || f != std::floor(f) || std::fabs(f) > 1e15f)
          lines.fail("expected an integer, got '" + line + "'");
        v = static_cast<int64_t>(f);
      }
    }
    values.push_back(v);
  }
  if (nan_rows && !nan_rows->empty()) nan_rows->resize(values.size(), false);
  return values;
}

}  // namespace

Dataset load_ogb_raw_folder(const fs::path& path, const LoadOptions& options) {
  std::error_code ec;
  fs::path folder = path.lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();  // "dir/raw/" -> "dir/raw"
  fs::path raw = folder / "raw", root = folder;
  if (find_csv(raw, "edge").empty()) {
    raw = folder;
    root = folder.parent_path();
  }
  const fs::path edge_file = find_csv(raw, "edge");
  if (edge_file.empty())
    throw DataFileError("'" + folder.string() +
                        "': no raw/edge.csv.gz (an OGB raw dataset folder holds raw/edge.csv.gz, "
                        "raw/node-feat.csv.gz, raw/node-label.csv.gz and split/<name>/{train,valid,test}.csv.gz)");
  Dataset d;
  d.name = fs::absolute(root, ec).lexically_normal().filename().string();

  // Edges, remembering the largest id and its line for the range check below.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  int64_t max_id = -1, max_line = 0;
  {
    TextLines lines(edge_file.string());
    for (std::string line; lines.next(line);) {
      if (is_blank_or_comment(line)) continue;
      const auto fields = split_fields(line);
      int64_t u = 0, v = 0;
      if (fields.size() != 2 || !parse_int(fields[0], u) || !parse_int(fields[1], v) || u < 0 || v < 0)
        lines.fail("expected two node ids (integers >= 0) 'src,dst', got '" + line + "'");
      if (std::max(u, v) >= options.max_nodes)
        lines.fail("node id " + std::to_string(std::max(u, v)) + " makes more nodes than the " +
                   std::to_string(options.max_nodes) + " allowed (LoadOptions::max_nodes)");
      if (std::max(u, v) > max_id) {
        max_id = std::max(u, v);
        max_line = lines.line_number();
      }
      pairs.emplace_back(u, v);
    }
  }

  int64_t num_nodes = -1;
  std::string num_nodes_from;
  if (const fs::path p = find_csv(raw, "num-node-list"); !p.empty()) {
    const std::vector<int64_t> n = read_int_column(p);
    if (n.size() != 1)
      throw DataFileError("'" + p.string() + "': must hold one node count (a single graph), got " +
                          std::to_string(n.size()) + " values");
    require_node_count(n[0], options, "'" + p.string() + "'", "the node count");
    num_nodes = n[0];
    num_nodes_from = p.string();
  }

  if (const fs::path p = find_csv(raw, "node-feat"); !p.empty()) {
    TextLines lines(p.string());
    Features& f = d.features;
    f.format = FeatureFormat::Dense;
    f.cols = -1;
    for (std::string line; lines.next(line);) {
      if (is_blank_or_comment(line)) continue;
      const auto fields = split_fields(line);
      if (f.cols < 0) f.cols = static_cast<int64_t>(fields.size());
      if (static_cast<int64_t>(fields.size()) != f.cols)
        lines.fail("has " + std::to_string(fields.size()) + " values, the first row has " + std::to_string(f.cols));
      for (size_t j = 0; j < fields.size(); ++j) {
        float v = 0;
        if (!parse_float(fields[j], v) || !std::isfinite(v))
          lines.fail("value " + std::to_string(j + 1) + " ('" + std::string(fields[j]) + "') is not a finite number");
        f.dense.push_back(v);
      }
      ++f.rows;
    }
    f.cols = std::max<int64_t>(f.cols, 0);
    if (num_nodes < 0) {
      num_nodes = f.rows;
      num_nodes_from = p.string();
    } else if (f.rows != num_nodes) {
      throw DataFileError("'" + p.string() + "': has " + std::to_string(f.rows) + " rows, but " + num_nodes_from +
                          " says " + std::to_string(num_nodes) + " nodes");
    }
  }

  std::vector<bool> unlabelled;  // [N] when some label is nan
  if (const fs::path p = find_csv(raw, "node-label"); !p.empty()) {
    d.labels = read_int_column(p, &unlabelled);
    const auto n = static_cast<int64_t>(d.labels.size());
    if (num_nodes < 0) {
      num_nodes = n;
      num_nodes_from = p.string();
    } else if (n != num_nodes) {
      throw DataFileError("'" + p.string() + "': has " + std::to_string(n) + " rows, but " + num_nodes_from + " says " +
                          std::to_string(num_nodes) + " nodes");
    }
  }
  if (num_nodes < 0) {
    num_nodes = max_id + 1;
    require_node_count(num_nodes, options, "'" + edge_file.string() + "'", "largest node id + 1");
  } else if (max_id >= num_nodes) {
    throw DataFileError("'" + edge_file.string() + "' line " + std::to_string(max_line) + ": node id " +
                        std::to_string(max_id) + " is not below the " + std::to_string(num_nodes) + " nodes of " +
                        num_nodes_from);
  }
  require_node_count(num_nodes, options, "'" + folder.string() + "'", "the node count");
  d.num_nodes = num_nodes;
  d.edge_index = edges_from_pairs(std::move(pairs));
  apply_edge_conventions(
      d, EdgeConvention{.symmetrize = false, .remove_self_loops = false, .note = "OGB's loaders keep edges as stored; its examples call to_undirected"}, options,
      "'" + folder.string() + "'");
  if (d.features.rows == 0 && d.features.cols == 0 && find_csv(raw, "node-feat").empty())
    add_degree_features(d, options);
  else
    apply_feature_format(d.features, options, "'" + folder.string() + "'");
  d.num_classes = infer_num_classes(d.labels, d.num_nodes, "'" + find_csv(raw, "node-label").string() + "'");
  const auto nan_labels = std::count(unlabelled.begin(), unlabelled.end(), true);
  if (nan_labels > 0)
    add_note(d, std::to_string(nan_labels) + " nodes without a label (nan) carry placeholder 0");

  // The split: split/<name>/, the first name in sorted order.
  std::vector<fs::path> split_dirs;
  if (fs::is_directory(root / "split", ec)) {
    for (const auto& entry : fs::directory_iterator(root / "split", ec))
      if (entry.is_directory()) split_dirs.push_back(entry.path());
  }
  std::sort(split_dirs.begin(), split_dirs.end());
  if (!split_dirs.empty()) {
    const fs::path dir = split_dirs.front();
    const std::pair<const char*, std::vector<int64_t>*> parts[] = {
        {"train", &d.train_idx}, {"valid", &d.valid_idx}, {"test", &d.test_idx}};
    for (auto [name, list] : parts) {
      const fs::path p = find_csv(dir, name);
      if (p.empty()) throw DataFileError("'" + dir.string() + "': no " + name + ".csv.gz");
      *list = read_int_column(p);
      std::sort(list->begin(), list->end());
      for (size_t i = 0; i < list->size(); ++i) {
        if ((*list)[i] < 0 || (*list)[i] >= d.num_nodes)
          throw DataFileError("'" + p.string() + "': node id " + std::to_string((*list)[i]) + " is outside [0, " +
                              std::to_string(d.num_nodes) + ")");
        if (i > 0 && (*list)[i] == (*list)[i - 1])
          throw DataFileError("'" + p.string() + "': node id " + std::to_string((*list)[i]) + " appears twice");
      }
    }
    if (split_dirs.size() > 1)
      add_note(d, "split '" + dir.filename().string() + "' (the first of " + std::to_string(split_dirs.size()) +
                      " in split/)");
  } else if (!d.labels.empty()) {
    add_random_split(d, options.split_seed, unlabelled);
  } else {
    add_note(d, "no labels, so no classes and no split");
  }
  validate_loaded(d, "'" + folder.string() + "'");
  return d;
}

}  // namespace edgewise::gnn::formats
