// Fuzz target: load_dataset on arbitrary bytes (every format it detects: npz
// layouts, edge lists), with every feature format. A load either yields a dataset
// that passes validate(), or throws DataFileError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "memory_file.hpp"

using namespace edgewise::gnn;

namespace {

// A file may declare any node count; the loader sizes per-node arrays (degree
// features, split bookkeeping, CSR offsets) by it, by design. The harness bounds
// it with the loader's own cap, so counts above it must be refused cleanly rather
// than allocated (sizes the engine cannot index, >= 2^31, are refused either way).
constexpr int64_t kMaxNodes = int64_t{1} << 22;

void load(const std::string& path, FeatureFormat format, double threshold) {
  LoadOptions options;
  options.features = format;
  options.sparse_threshold = threshold;
  options.max_nodes = kMaxNodes;
  try {
    const Dataset d = load_dataset(path, options);
    d.validate();  // the loader's result keeps the dataset contract...
    if (d.features.format == FeatureFormat::Auto || d.features.rows != d.num_nodes) std::abort();
    if (format != FeatureFormat::Auto && d.features.format != format)
      std::abort();
    // ...so its edges make a graph: every id in [0, N), N within the cap.
    for (int64_t id : d.edge_index)
      if (id < 0 || id >= d.num_nodes) std::abort();
    if (d.num_nodes > kMaxNodes) std::abort();
  } catch (const DataFileError&) {
  }
}

}  // namespace

// Entries, and dense features inflated from CSR, stay under 256 MiB (the reader's
// own limit, lowered): a small input must not allocate gigabytes.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("EDGEWISE_NPZ_MAX_BYTES", "256M", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static edgewise::fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  load(path, FeatureFormat::Auto, 0.1);
  load(path, FeatureFormat::Auto, 0.9);
  load(path, FeatureFormat::Dense, 0.1);
  load(path, FeatureFormat::Sparse, 0.1);
  return 0;
}
