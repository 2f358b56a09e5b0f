// Dataset cases: loading Cora and Coauthor-CS (when EDGEWISE_DATA_DIR holds them)
// with dense vs CSR features, and generating R-MAT and planted-partition graphs.
#include <cstdio>
#include <memory>
#include <string>

#include "bench.hpp"
#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "edgewise/gnn/data/synthetic.hpp"

namespace edgewise::bench {
namespace {

// Bytes the loader inflates: the uncompressed size of every entry.
double inflated_bytes(const std::string& path) {
  double total = 0;
  const gnn::NpzArchive archive = gnn::NpzArchive::open(path);
  for (const gnn::ZipEntry& e : archive.entries()) total += static_cast<double>(e.uncompressed_size);
  return total;
}

Prepared prepare_load(const std::string& path, gnn::FeatureFormat format, const std::string& baseline) {
  auto sink = std::make_shared<gnn::Dataset>();
  *sink = gnn::load_dataset(path, {.features = format});  // validates once, warms the page cache
  char detail[96];
  std::snprintf(detail, sizeof detail, "features %s, density %.4f", gnn::to_string(sink->features.format),
                sink->features.density());
  Prepared p;
  p.run = [sink, path, format] { *sink = gnn::load_dataset(path, {.features = format}); };
  p.bytes = inflated_bytes(path);
  p.baseline = baseline;
  p.detail = detail;
  return p;
}

Prepared prepare_rmat(int64_t n, int64_t e, bool symmetrize, const Options& options) {
  auto sink = std::make_shared<gnn::Dataset>();
  const gnn::RmatOptions o{.symmetrize = symmetrize};
  Prepared p;
  p.run = [sink, n, e, o, seed = options.seed] { *sink = gnn::rmat_graph(n, e, 0.57, 0.19, 0.19, seed, o); };
  p.run();
  char detail[96];
  std::snprintf(detail, sizeof detail, "%lld edges kept", static_cast<long long>(sink->num_edges()));
  p.detail = detail;
  p.bytes = 0;  // compute- and sort-bound: the time is the figure
  return p;
}

// The data directory the benchmark scripts point at, if it holds `name`.
std::string dataset_path(const char* name) {
  try {
    return gnn::resolve_dataset_path(name).string();
  } catch (const std::exception&) {
    return {};
  }
}

EW_BENCH_CASES {
  const Device cpu = Device::cpu();
  for (const char* name : {"cora", "coauthor_cs"}) {
    const std::string path = dataset_path(name);
    if (path.empty()) continue;  // no data here: tools/run.sh sets EDGEWISE_DATA_DIR when ../shared/datasets exists
    const std::string base = std::string("datasets/load/") + name;
    register_case({base + "/dense", cpu, [=](const Options&) {
                     return prepare_load(path, gnn::FeatureFormat::Dense, "");
                   }});
    register_case({base + "/sparse", cpu, [=](const Options&) {
                     return prepare_load(path, gnn::FeatureFormat::Sparse, base + "/dense");
                   }});
  }
  for (bool symmetrize : {false, true}) {
    register_case({std::string("datasets/rmat/") + (symmetrize ? "symmetric" : "directed") + "/N=1M,E=10M", cpu,
                   [=](const Options& o) {
                     return o.quick ? prepare_rmat(int64_t{1} << 18, 2500000, symmetrize, o)
                                    : prepare_rmat(int64_t{1} << 20, 10000000, symmetrize, o);
                   }});
  }
  register_case({"datasets/planted_partition/default", cpu, [](const Options& o) {
                   auto sink = std::make_shared<gnn::Dataset>();
                   Prepared p;
                   p.run = [sink, seed = o.seed] { *sink = gnn::planted_partition({}, seed); };
                   return p;
                 }});
}

}  // namespace
}  // namespace edgewise::bench
