// Regression tests for inputs the fuzz targets (fuzz/) found: each file here made
// a reader crash, abort or hit undefined behaviour before its fix; now it must
// throw the library's error (DataFileError for data files). Small archives are
// written byte by byte with npz_writer.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "npz_writer.hpp"

namespace edgewise::test {
namespace {

using gnn::DataFileError;
using gnn::FeatureFormat;
using gnn::LoadOptions;

struct Int64Array {
  std::string key;
  std::vector<int64_t> shape, values;
};

// An .npz of stored int64 members.
Bytes int64_npz(const std::vector<Int64Array>& arrays) {
  std::vector<ZipMember> members;
  for (const Int64Array& a : arrays) members.push_back({a.key + ".npy", npy_of("<i8", a.values, a.shape), false});
  return make_zip(members);
}

template <class Fn>
void expect_data_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "no DataFileError thrown";
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

// A 100-byte file declaring 2^40 nodes (and no edges or features) made the loader
// allocate per-node bookkeeping for all of them: std::bad_alloc (or a sanitizer
// abort) instead of an error. Node counts the engine cannot index are refused.
TEST(FuzzRegressions, DatasetWithMoreNodesThanTheEngineIndexes) {
  TempDir dir;
  const auto path = dir.file("huge.npz");
  for (int64_t n : {int64_t{1} << 40, std::numeric_limits<int64_t>::max()}) {
    write_file(path, int64_npz({{"num_nodes", {}, {n}}, {"edge_index", {2, 0}, {}}}));
    for (FeatureFormat format : {FeatureFormat::Auto, FeatureFormat::Dense, FeatureFormat::Sparse}) {
      LoadOptions options;
      options.features = format;
      expect_data_error([&] { gnn::load_dataset(path.string(), options); },
                        {"huge.npz", "num_nodes", std::to_string(n)});
    }
  }
}

// A label of INT64_MAX (and no num_classes key) overflowed max(label) + 1: signed
// overflow, undefined behaviour.
TEST(FuzzRegressions, DatasetLabelAtInt64Max) {
  TempDir dir;
  const auto path = dir.file("label.npz");
  write_file(path, int64_npz({{"num_nodes", {}, {2}},
                              {"edge_index", {2, 1}, {0, 1}},
                              {"node_label", {2}, {0, std::numeric_limits<int64_t>::max()}}}));
  expect_data_error([&] { gnn::load_dataset(path.string()); }, {"label.npz", "node_label", "9223372036854775807"});
}

// CI's fuzz phase (fuzz_dataset, node cap 2^22 as the harness sets it): an edge
// list naming node 777777777 made add_degree_features allocate 3.1 GB for its
// in-degree column. Ids are now checked against LoadOptions::max_nodes, with the line.
TEST(FuzzRegressions, EdgeListNamingAHugeNodeId) {
  TempDir dir;
  const auto path = dir.file("e.csv");
  const std::string text = "0,777777777\n";
  write_file(path, Bytes(text.begin(), text.end()));
  LoadOptions options;
  options.max_nodes = int64_t{1} << 22;
  expect_data_error([&] { gnn::load_dataset(path.string(), options); },
                    {"e.csv' line 1", "node id 777777777", "max_nodes"});
}

// gnn-benchmark attributes declaring 2^31 - 1 columns for one entry: asking for
// dense features inflated them to 8 GB. Inflation is checked against the entry
// limit (here lowered to 1 GiB, as the fuzz harness lowers it).
TEST(FuzzRegressions, GnnBenchmarkWideAttributesAskedDense) {
  struct EntryLimit {
    EntryLimit() { setenv("EDGEWISE_NPZ_MAX_BYTES", "1G", 1); }
    ~EntryLimit() { unsetenv("EDGEWISE_NPZ_MAX_BYTES"); }
  } limit;
  TempDir dir;
  const auto path = dir.file("wide.npz");
  write_file(path, int64_npz({{"adj_indices", {1}, {0}},
                              {"adj_indptr", {2}, {0, 1}},
                              {"adj_shape", {2}, {1, 1}},
                              {"adj_data", {1}, {1}},
                              {"attr_indices", {1}, {0}},
                              {"attr_indptr", {2}, {0, 1}},
                              {"attr_shape", {2}, {1, (int64_t{1} << 31) - 1}},
                              {"attr_data", {1}, {1}}}));
  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  expect_data_error([&] { gnn::load_dataset(path.string(), dense); },
                    {"wide.npz", "dense node features of 1 x 2147483647", "keep them sparse"});
  EXPECT_NO_THROW(gnn::load_dataset(path.string())) << "sparse (Auto) stays fine";
}

// tools/fuzz.sh 600 (fuzz_npz): after ~80,000 inputs the process ran out of file
// descriptors. An entry whose local header fails a check threw from the entry
// reader's constructor after it had opened the file, so its destructor never closed
// it. Reading such an entry many times must not leak a descriptor.
TEST(FuzzRegressions, AnEntryRejectedByItsLocalHeaderLeaksNoFileDescriptor) {
  TempDir dir;
  const auto path = dir.file("bad_local.npz");
  Bytes zip = int64_npz({{"a", {2}, {1, 2}}});
  zip[0] = 'X';  // the local header's signature (the central directory still points at it)
  write_file(path, zip);
  const auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  const auto before = open_descriptors();
  for (int i = 0; i < 2000; ++i) {
    const gnn::NpzArchive archive = gnn::NpzArchive::open(path.string());
    EXPECT_THROW((void)archive.read("a"), DataFileError);
  }
  EXPECT_LE(open_descriptors(), before + 2) << "file descriptors leaked";
}

}  // namespace
}  // namespace edgewise::test
