// Where datasets are looked up by name ($EDGEWISE_DATA_DIR, else the per-user cache),
// and what a name or path of a kind of data resolves to.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <system_error>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"

namespace edgewise::gnn {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

bool is_tu_prefix(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p.string() + "_A.txt", ec);
}

bool looks_like_path(std::string_view s) {
  std::error_code ec;
  return s.find('/') != std::string_view::npos || s.find('\\') != std::string_view::npos || s.ends_with(".npz") ||
         std::filesystem::is_regular_file(std::filesystem::path(s), ec) ||
         std::filesystem::is_directory(std::filesystem::path(s), ec);
}

}  // namespace

std::filesystem::path default_data_dir() {
  if (std::string dir = env("EDGEWISE_DATA_DIR"); !dir.empty()) return dir;
  if (std::string cache = env("XDG_CACHE_HOME"); !cache.empty() && cache.front() == '/')
    return std::filesystem::path(cache) / "edgewise" / "datasets";
  if (std::string home = env("HOME"); !home.empty()) return std::filesystem::path(home) / ".cache" / "edgewise" / "datasets";
  return {};
}

std::filesystem::path resolve_dataset_path(std::string_view name_or_path, DataKind kind) {
  std::error_code ec;
  if (name_or_path.empty()) throw DataFileError("load_dataset: empty dataset name");
  if (looks_like_path(name_or_path) || (kind == DataKind::Graph && is_tu_prefix(std::filesystem::path(name_or_path)))) {
    std::filesystem::path p(name_or_path);
    if (!std::filesystem::exists(p, ec) && !(kind == DataKind::Graph && is_tu_prefix(p)))
      throw DataFileError("load_dataset: no such file '" + p.string() + "'");
    return p;
  }
  std::string name(name_or_path);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(c));
  });
  const bool from_env = !env("EDGEWISE_DATA_DIR").empty();
  const std::filesystem::path dir = default_data_dir();
  const std::string how =
      " Set EDGEWISE_DATA_DIR to a folder holding <name>.npz files (the OGB npz layout" +
      std::string(kind == DataKind::Graph ? ", graph collections or TU folders" : "") +
      "), or pass a path. Bundled names: " +
      (kind == DataKind::Graph ? "reddit_threads." : "cora, citeseer, amazon_photo, coauthor_cs.");
  if (dir.empty())
    throw DataFileError("load_dataset: dataset '" + name +
                        "' cannot be looked up: EDGEWISE_DATA_DIR, XDG_CACHE_HOME and HOME are all unset." + how);
  if (kind == DataKind::Graph && std::filesystem::is_directory(dir / name, ec)) return dir / name;
  const std::filesystem::path file = dir / (name + ".npz");
  if (!std::filesystem::is_regular_file(file, ec))
    throw DataFileError("load_dataset: dataset '" + name + "' not found: looked for " + file.string() +
                        (kind == DataKind::Graph ? " and the folder " + (dir / name).string() : std::string()) + " (" +
                        (from_env ? "EDGEWISE_DATA_DIR" : "the per-user cache; EDGEWISE_DATA_DIR is not set") + ")." +
                        how);
  return file;
}

std::filesystem::path resolve_dataset_path(std::string_view name_or_path) {
  return resolve_dataset_path(name_or_path, DataKind::Node);
}

}  // namespace edgewise::gnn
