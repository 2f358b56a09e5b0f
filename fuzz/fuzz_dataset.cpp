// Fuzz target: load_dataset on arbitrary bytes (the OGB npz layout), with every
// feature format. A load either yields a dataset that passes validate() and
// builds a Graph, or throws DataFileError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "edgewise/gnn/dataset.hpp"
#include "edgewise/gnn/graph.hpp"
#include "edgewise/gnn/npz.hpp"
#include "memory_file.hpp"

using namespace edgewise::gnn;

namespace {

// A file may declare any num_nodes; a dataset without features still costs
// O(num_nodes) memory (split bookkeeping, CSR offsets), which is by design, so
// declared sizes far beyond what the input could describe are not loaded here.
// (Sizes the engine cannot index, >= 2^31, must still be refused cleanly.)
constexpr int64_t kMaxDeclaredNodes = int64_t{1} << 22;

bool declares_too_many_nodes(const std::string& path) {
  try {
    const NpzArchive archive = NpzArchive::open(path);
    if (!archive.contains("num_nodes")) return false;
    const int64_t n = archive.read("num_nodes").scalar<int64_t>();
    return n > kMaxDeclaredNodes && n < (int64_t{1} << 31);
  } catch (const DataFileError&) {
    return false;  // load_dataset will report it
  }
}

void load(const std::string& path, FeatureFormat format, double threshold) {
  LoadOptions options;
  options.features = format;
  options.sparse_threshold = threshold;
  try {
    const Dataset d = load_dataset(path, options);
    d.validate();  // the loader's result keeps the dataset contract...
    if (d.features.format == FeatureFormat::Auto || d.features.rows != d.num_nodes) std::abort();
    if (format != FeatureFormat::Auto && d.features.format != format)
      std::abort();
    // ...so its edges make a graph.
    const std::vector<int64_t> src(d.src().begin(), d.src().end()), dst(d.dst().begin(), d.dst().end());
    const Graph g = Graph::from_coo(src, dst, d.num_nodes);
    if (g.num_edges() != d.num_edges()) std::abort();
  } catch (const DataFileError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static edgewise::fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  if (declares_too_many_nodes(path)) return 0;
  load(path, FeatureFormat::Auto, 0.1);
  load(path, FeatureFormat::Auto, 0.9);
  load(path, FeatureFormat::Dense, 0.1);
  load(path, FeatureFormat::Sparse, 0.1);
  return 0;
}
