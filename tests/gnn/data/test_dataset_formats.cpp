// Tests of load_dataset's other readers: gnn-benchmark and scipy.sparse .npz,
// OGB raw folders, plain edge lists (files written here, with NumPy's text
// dtypes and gzip made by hand), the random per-class split, and the errors on
// malformed input (file and key or line named).
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/data/graph_dataset.hpp"
#include "npz_writer.hpp"

namespace edgewise::test {
namespace {

using gnn::DataFileError;
using gnn::Dataset;
using gnn::FeatureFormat;
using gnn::LoadOptions;
using Keys = std::map<std::string, Bytes>;

template <class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "nothing thrown";
  } catch (const DataFileError& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

Bytes i64(const std::vector<int64_t>& v) { return npy_of("<i8", v, {static_cast<int64_t>(v.size())}); }
Bytes f32(const std::vector<float>& v) { return npy_of("<f4", v, {static_cast<int64_t>(v.size())}); }

// NumPy text arrays as np.array([...]) writes them: '|S<n>' (bytes, NUL padded)
// or '<U<n>' (UTF-32LE, NUL padded); a 0-d array when `scalar`.
Bytes text_npy(const std::vector<std::string>& texts, bool unicode, bool scalar = false) {
  size_t width = 1;
  for (const auto& t : texts) width = std::max(width, t.size());
  Bytes payload;
  for (const auto& t : texts) {
    for (size_t i = 0; i < width; ++i) {
      const uint8_t c = i < t.size() ? static_cast<uint8_t>(t[i]) : 0;
      payload.push_back(c);
      if (unicode) payload.insert(payload.end(), 3, 0);
    }
  }
  const std::string descr = std::string(unicode ? "<U" : "|S") + std::to_string(width);
  return make_npy(descr, scalar ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(texts.size())},
                  payload);
}

// A pickled object array: its payload is opaque (never unpickled by the reader).
Bytes object_npy(int64_t n) {
  Bytes pickle = {0x80, 0x04, 0x95, 'n', 'o', 't', ' ', 'r', 'e', 'a', 'd', '.'};
  return make_npy("|O", {n}, pickle);
}

std::string write_npz(const TempDir& dir, const std::string& name, const Keys& keys) {
  std::vector<ZipMember> members;
  for (const auto& [k, v] : keys) members.push_back({k + ".npy", v, true});
  const std::string path = dir.file(name).string();
  write_file(path, make_zip(members));
  return path;
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  if (path.extension() == ".gz") {
    gzFile f = gzopen(path.string().c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
    gzclose(f);
  } else {
    write_file(path, Bytes(text.begin(), text.end()));
  }
}

// The graph every format below stores: A[i, j] != 0 <=> edge i -> j.
const std::vector<std::pair<int64_t, int64_t>> kEdges = {{0, 1}, {0, 2}, {1, 0}, {2, 2},
                                                         {3, 4}, {4, 0}, {4, 3}};  // sorted
constexpr int64_t kN = 5;

std::vector<int64_t> expected_edge_index() {
  std::vector<int64_t> src, dst;
  for (auto [u, v] : kEdges) src.push_back(u), dst.push_back(v);
  src.insert(src.end(), dst.begin(), dst.end());
  return src;
}

// kEdges as gnn-benchmark's convention makes it: A + A^T, duplicates merged, self loops removed.
const std::vector<std::pair<int64_t, int64_t>> kUndirectedEdges = {{0, 1}, {0, 2}, {0, 4}, {1, 0},
                                                                   {2, 0}, {3, 4}, {4, 0}, {4, 3}};

std::vector<int64_t> edge_index_of(const std::vector<std::pair<int64_t, int64_t>>& edges) {
  std::vector<int64_t> src, dst;
  for (auto [u, v] : edges) src.push_back(u), dst.push_back(v);
  src.insert(src.end(), dst.begin(), dst.end());
  return src;
}

std::vector<float> in_degrees(const std::vector<std::pair<int64_t, int64_t>>& edges, int64_t n) {
  std::vector<float> deg(static_cast<size_t>(n), 0.0f);
  for (auto [u, v] : edges) deg[static_cast<size_t>(v)] += 1.0f;
  return deg;
}

// kEdges as CSR parts, row 0 stored out of order plus an explicit zero (0 -> 3).
Keys adjacency_csr(const std::string& prefix) {
  return {{prefix + "indptr", i64({0, 3, 4, 5, 6, 8})},
          {prefix + "indices", i64({2, 3, 1, 0, 2, 4, 0, 3})},
          {prefix + "data", f32({1, 0, 1, 1, 1, 1, 1, 1})},
          {prefix + "shape", i64({kN, kN})}};
}

// ---------------------------------------------------------------------------
// gnn-benchmark

Keys gnn_benchmark_keys() {
  Keys k = adjacency_csr("adj_");
  // attr [5, 4]: row 1 out of order with a duplicate (summed), row 3 an explicit zero.
  k["attr_indptr"] = i64({0, 1, 4, 4, 5, 6});
  k["attr_indices"] = i64({2, 3, 0, 3, 1, 0});
  k["attr_data"] = f32({1.5f, 1.0f, 2.0f, 0.5f, 0.0f, -3.0f});
  k["attr_shape"] = i64({kN, 4});
  k["labels"] = i64({1, 0, 1, 2, 0});
  k["node_names"] = text_npy({"a", "bb", "ccc", "d", "e"}, true);
  k["attr_names"] = object_npy(4);
  k["class_names"] = text_npy({"x", "y", "z"}, false);
  return k;
}

TEST(GnnBenchmarkNpz, ReadsAdjacencyCsrFeaturesAndLabelsAndSkipsTextAndObjectEntries) {
  TempDir dir;
  const std::string path = write_npz(dir, "photo.npz", gnn_benchmark_keys());
  LoadOptions sparse;
  sparse.features = FeatureFormat::Sparse;
  const Dataset d = gnn::load_dataset(path, sparse);
  EXPECT_EQ(d.name, "photo");
  EXPECT_EQ(d.num_nodes, kN);
  EXPECT_EQ(d.edge_index, edge_index_of(kUndirectedEdges));
  EXPECT_NE(d.note.find("7 stored edges \u2192 8 directed edges after symmetrising (A + A^T, duplicates merged, 1 "
                        "self loop removed)"),
            std::string::npos)
      << d.note;
  EXPECT_EQ(d.labels, (std::vector<int64_t>{1, 0, 1, 2, 0}));
  EXPECT_EQ(d.num_classes, 3);
  ASSERT_TRUE(d.features.is_sparse());
  EXPECT_EQ(d.features.csr.offsets, (std::vector<int64_t>{0, 1, 3, 3, 3, 4}));
  EXPECT_EQ(d.features.csr.indices, (std::vector<int32_t>{2, 0, 3, 0}));
  EXPECT_EQ(d.features.csr.values, (std::vector<float>{1.5f, 2.0f, 1.5f, -3.0f}));
  for (const char* key : {"node_names", "attr_names", "class_names", "not read"})
    EXPECT_NE(d.note.find(key), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("random"), std::string::npos) << d.note;

  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  const Dataset e = gnn::load_dataset(path, dense);
  ASSERT_FALSE(e.features.is_sparse());
  std::vector<float> want(kN * 4, 0.0f);
  want[0 * 4 + 2] = 1.5f;
  want[1 * 4 + 0] = 2.0f;
  want[1 * 4 + 3] = 1.5f;
  want[4 * 4 + 0] = -3.0f;
  EXPECT_EQ(e.features.dense, want);

  // Kept as stored when asked.
  LoadOptions as_stored;
  as_stored.symmetrize = false;
  as_stored.remove_self_loops = false;
  const Dataset f = gnn::load_dataset(path, as_stored);
  EXPECT_EQ(f.edge_index, expected_edge_index());
  EXPECT_NE(f.note.find("7 edges as stored (directed: 2 edges without its reverse; symmetrising was turned off)"),
            std::string::npos)
      << f.note;
}

TEST(GnnBenchmarkNpz, ReadsDenseAttrMatrixAndOneHotLabelsAndGivesDegreesWithoutAttributes) {
  TempDir dir;
  Keys k = adjacency_csr("adj_");
  std::vector<float> x(kN * 2);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.25f;
  k["attr_matrix"] = npy_of("<f4", x, {kN, 2});
  k["labels_indptr"] = i64({0, 1, 2, 3, 4, 5});
  k["labels_indices"] = i64({2, 0, 1, 1, 0});
  k["labels_data"] = f32({1, 1, 1, 1, 1});
  k["labels_shape"] = i64({kN, 3});
  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  const Dataset d = gnn::load_dataset(write_npz(dir, "dense.npz", k), dense);
  EXPECT_EQ(d.features.dense, x);
  EXPECT_EQ(d.labels, (std::vector<int64_t>{2, 0, 1, 1, 0}));

  const Dataset g = gnn::load_dataset(write_npz(dir, "graph.npz", adjacency_csr("adj_")), dense);
  EXPECT_EQ(g.features.cols, 1);
  EXPECT_EQ(g.features.dense, in_degrees(kUndirectedEdges, kN)) << "degrees of the symmetrised graph";
  EXPECT_TRUE(g.labels.empty());
  EXPECT_EQ(g.num_classes, 0);
  EXPECT_TRUE(g.train_idx.empty() && g.valid_idx.empty() && g.test_idx.empty());
  EXPECT_NE(g.note.find("in-degree"), std::string::npos) << g.note;
  EXPECT_NE(g.note.find("no labels"), std::string::npos) << g.note;
}

TEST(GnnBenchmarkNpz, MalformedFilesNameTheFileAndKey) {
  TempDir dir;
  const auto fails = [&](Keys k, std::initializer_list<std::string> parts) {
    const std::string path = write_npz(dir, "bad.npz", k);
    expect_error([&] { (void)gnn::load_dataset(path); }, parts);
  };
  Keys k = gnn_benchmark_keys();
  k.erase("adj_shape");
  fails(k, {"bad.npz", "required key 'adj_shape' is missing"});
  k = gnn_benchmark_keys();
  k["adj_indices"] = i64({2, 3, 1, 0, 2, 9, 0, 3});
  fails(k, {"bad.npz", "key 'adj_indices' holds indices[5] (9) outside [0, 5)"});
  k = gnn_benchmark_keys();
  k["adj_indptr"] = i64({0, 3, 4, 5, 8});
  fails(k, {"bad.npz", "key 'adj_indptr' has 5 entries, expected 6"});
  k = gnn_benchmark_keys();
  k["adj_indptr"] = i64({0, 3, 2, 5, 6, 8});
  fails(k, {"key 'adj_indptr' decreases at position 2"});
  k = gnn_benchmark_keys();
  k["adj_data"] = f32({1, 1, 1});
  fails(k, {"key 'adj_data' has 3 entries, but 'adj_indices' has 8"});
  k = gnn_benchmark_keys();
  k["adj_shape"] = i64({kN, kN + 1});
  fails(k, {"key 'adj_shape' must be square"});
  k = gnn_benchmark_keys();
  k["attr_shape"] = i64({kN - 1, 4});
  fails(k, {"key 'attr_indptr' has 6 entries, expected 5"});
  k = gnn_benchmark_keys();
  k["labels"] = i64({1, 0, 1, 2});
  fails(k, {"bad.npz", "key 'labels' must have shape (N,) with N = 5, got (4,)"});
  fails({{"adj_matrix", object_npy(1)}, {"node_label", i64({0})}},
        {"bad.npz", "key 'adj_matrix' is a pickled scipy matrix", "never unpickled"});
  k = gnn_benchmark_keys();
  k["attr_data"] = f32({1.5f, 1.0f, 2.0f, 0.5f, 0.0f, std::numeric_limits<float>::infinity()});
  fails(k, {"key 'attr_data' holds a non-finite value", "[4, 0]"});
}

// ---------------------------------------------------------------------------
// Random split

std::vector<int64_t> split_labels() {
  std::vector<int64_t> labels;
  for (int64_t v = 0; v < 150; ++v) labels.push_back(v < 60 ? 0 : v < 130 ? 1 : 2);  // 60, 70, 20 nodes
  std::reverse(labels.begin(), labels.end());
  return labels;
}

Dataset load_split(const TempDir& dir, uint64_t seed) {
  Keys k = {{"adj_indptr", i64(std::vector<int64_t>(151, 0))},
            {"adj_indices", i64({})},
            {"adj_data", f32({})},
            {"adj_shape", i64({150, 150})},
            {"labels", i64(split_labels())}};
  LoadOptions options;
  options.split_seed = seed;
  return gnn::load_dataset(write_npz(dir, "split.npz", k), options);
}

TEST(RandomSplit, TwentyTrainThirtyValidPerClassRestTestDisjointSortedAndSeeded) {
  TempDir dir;
  const Dataset d = load_split(dir, 7);
  const std::vector<int64_t> labels = split_labels();
  std::map<int64_t, int> train, valid, test;
  std::set<int64_t> all;
  for (auto [list, count] : {std::pair{&d.train_idx, &train}, {&d.valid_idx, &valid}, {&d.test_idx, &test}}) {
    EXPECT_TRUE(std::is_sorted(list->begin(), list->end()));
    for (int64_t v : *list) {
      EXPECT_TRUE(all.insert(v).second) << "node " << v << " in two splits";
      ++(*count)[labels[static_cast<size_t>(v)]];
    }
  }
  EXPECT_EQ(all.size(), 150u) << "every labelled node lands in a split";
  EXPECT_EQ(train, (std::map<int64_t, int>{{0, 20}, {1, 20}, {2, 20}}));
  EXPECT_EQ(valid, (std::map<int64_t, int>{{0, 30}, {1, 30}}));
  EXPECT_EQ(test, (std::map<int64_t, int>{{0, 10}, {1, 20}}));
  EXPECT_NE(d.note.find("seed 7"), std::string::npos) << d.note;
  EXPECT_NE(d.note.find("1 class(es) too small"), std::string::npos) << d.note;

  const Dataset again = load_split(dir, 7);
  EXPECT_EQ(again.train_idx, d.train_idx);
  EXPECT_EQ(again.valid_idx, d.valid_idx);
  EXPECT_EQ(again.test_idx, d.test_idx);
  const Dataset other = load_split(dir, 8);
  EXPECT_NE(other.train_idx, d.train_idx) << "another seed draws another split";
}

TEST(RandomSplit, TheOgbNpzLayoutWithLabelsButNoSplitKeysGetsTheSameSplit) {
  TempDir dir;
  const Keys k = {{"num_nodes", npy_of("<i8", std::vector<int64_t>{150}, {})},
                  {"edge_index", npy_of("<i8", std::vector<int64_t>{}, {2, 0})},
                  {"node_label", i64(split_labels())}};
  LoadOptions options;
  options.split_seed = 7;
  const Dataset d = gnn::load_dataset(write_npz(dir, "ogb.npz", k), options);
  const Dataset bench = load_split(dir, 7);
  EXPECT_EQ(d.train_idx, bench.train_idx);
  EXPECT_EQ(d.valid_idx, bench.valid_idx);
  EXPECT_EQ(d.test_idx, bench.test_idx);
  EXPECT_EQ(d.train_idx.size(), 60u);
  EXPECT_NE(d.note.find("no split in the file"), std::string::npos) << d.note;

  Keys with_test = k;  // one split key present: the file's word stands, nothing is made up
  with_test["test_idx"] = i64({0, 1});
  const Dataset e = gnn::load_dataset(write_npz(dir, "ogb_test.npz", with_test), options);
  EXPECT_TRUE(e.train_idx.empty() && e.valid_idx.empty());
  EXPECT_EQ(e.note, "");
}

// ---------------------------------------------------------------------------
// scipy.sparse.save_npz

TEST(ScipySparseNpz, CsrCscAndCooOfOneMatrixGiveTheSameGraphWithDegreeFeatures) {
  TempDir dir;
  Keys csr = adjacency_csr("");
  csr["format"] = text_npy({"csr"}, false, true);
  // The transpose's CSR is the matrix's CSC: column j lists the rows i with A[i, j].
  Keys csc = {{"indptr", i64({0, 2, 3, 5, 6, 7})},
              {"indices", i64({1, 4, 0, 2, 0, 4, 3})},
              {"data", f32({1, 1, 1, 1, 1, 1, 1})},
              {"shape", i64({kN, kN})},
              {"format", text_npy({"csc"}, true, true)}};
  Keys coo = {{"row", i64({4, 0, 3, 2, 1, 0, 4, 0})},
              {"col", i64({0, 2, 4, 2, 0, 1, 3, 3})},
              {"data", f32({1, 1, 1, 1, 1, 1, 1, 0})},
              {"shape", i64({kN, kN})},
              {"format", text_npy({"coo"}, false, true)}};
  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  for (const auto& [name, keys] : {std::pair{"csr.npz", csr}, {"csc.npz", csc}, {"coo.npz", coo}}) {
    SCOPED_TRACE(name);
    const Dataset d = gnn::load_dataset(write_npz(dir, name, keys), dense);
    EXPECT_EQ(d.num_nodes, kN);
    EXPECT_EQ(d.edge_index, expected_edge_index());
    EXPECT_EQ(d.features.dense, in_degrees(kEdges, kN));
    EXPECT_TRUE(d.labels.empty());
    EXPECT_EQ(d.num_classes, 0);
    EXPECT_NE(d.note.find("no labels"), std::string::npos) << d.note;
  }
}

TEST(ScipySparseNpz, MalformedFilesNameTheFileAndKey) {
  TempDir dir;
  const auto fails = [&](Keys k, std::initializer_list<std::string> parts) {
    const std::string path = write_npz(dir, "bad_sp.npz", k);
    expect_error([&] { (void)gnn::load_dataset(path); }, parts);
  };
  Keys k = adjacency_csr("");
  k["format"] = text_npy({"dia"}, false, true);
  fails(k, {"bad_sp.npz", "key 'format' is 'dia'"});
  k["format"] = object_npy(1);
  fails(k, {"bad_sp.npz", "key 'format'", "never unpickled"});
  k["format"] = text_npy({"csr"}, false, true);
  k.erase("indptr");
  fails(k, {"bad_sp.npz", "required key 'indptr' is missing"});
  k = adjacency_csr("");
  k["format"] = text_npy({"csr"}, false, true);
  k["indices"] = i64({2, 3, 1, 0, 2, 4, -1, 3});
  fails(k, {"key 'indices' holds indices[6] (-1) outside [0, 5)"});
  k = {{"row", i64({0, 1})},
       {"col", i64({1, 5})},
       {"data", f32({1, 1})},
       {"shape", i64({kN, kN})},
       {"format", text_npy({"coo"}, false, true)}};
  fails(k, {"bad_sp.npz", "key 'col' holds col[1] (5) outside [0, 5)"});
  k["col"] = i64({1});
  fails(k, {"keys 'row', 'col', 'data' must have equal lengths"});
}

// ---------------------------------------------------------------------------
// OGB raw folders

void write_ogb_folder(const std::filesystem::path& root, bool with_split) {
  write_text(root / "raw" / "edge.csv.gz", "0,1\n0,2\n1,0\n2,2\n3,4\n4,3\n4,0\n");
  write_text(root / "raw" / "num-node-list.csv.gz", "5\n");
  write_text(root / "raw" / "node-feat.csv.gz", "0.5,1\n-2,0\n0,0\n3.25,1e-3\n7,-0\n");
  write_text(root / "raw" / "node-label.csv.gz", "1\n0\n1\n2\n0\n");
  if (with_split) {
    write_text(root / "split" / "time" / "train.csv.gz", "3\n0\n");
    write_text(root / "split" / "time" / "valid.csv.gz", "1\n");
    write_text(root / "split" / "time" / "test.csv", "4\n2\n");
  }
}

TEST(OgbRawFolder, ReadsEdgesFeaturesLabelsAndSplit) {
  TempDir dir;
  const auto root = dir.file("ogbn_tiny");
  write_ogb_folder(root, true);
  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  for (const auto& path : {root, root / "raw", root / "raw" / ""}) {
    const Dataset d = gnn::load_dataset(path.string(), dense);
    EXPECT_EQ(d.name, "ogbn_tiny");
    EXPECT_EQ(d.num_nodes, kN);
    EXPECT_EQ(d.edge_index, expected_edge_index());
    EXPECT_EQ(d.features.cols, 2);
    EXPECT_EQ(d.features.dense, (std::vector<float>{0.5f, 1, -2, 0, 0, 0, 3.25f, 1e-3f, 7, -0.0f}));
    EXPECT_EQ(d.labels, (std::vector<int64_t>{1, 0, 1, 2, 0}));
    EXPECT_EQ(d.num_classes, 3);
    EXPECT_EQ(d.train_idx, (std::vector<int64_t>{0, 3}));
    EXPECT_EQ(d.valid_idx, (std::vector<int64_t>{1}));
    EXPECT_EQ(d.test_idx, (std::vector<int64_t>{2, 4}));
    // As OGB stores it, with the hint that the graph is directed.
    EXPECT_NE(d.note.find("7 edges as stored (directed: 2 edges without its reverse"), std::string::npos) << d.note;
    EXPECT_NE(d.note.find("its examples call to_undirected"), std::string::npos) << d.note;
  }
  // Through the spec the tools use; the description carries the note.
  const auto other = dir.file("nosplit");
  write_ogb_folder(other, false);
  const gnn::ResolvedDataset r = gnn::load_dataset_spec(other.string());
  EXPECT_EQ(r.dataset.train_idx.size(), 5u) << "each class is smaller than 20 nodes";
  EXPECT_NE(r.description.find("no split in the file: a random one"), std::string::npos) << r.description;
}

TEST(OgbRawFolder, MalformedFilesNameTheFileAndLine) {
  TempDir dir;
  const auto root = dir.file("bad");
  write_ogb_folder(root, true);
  const auto fails = [&](std::initializer_list<std::string> parts) {
    expect_error([&] { (void)gnn::load_dataset(root.string()); }, parts);
  };
  write_text(root / "raw" / "edge.csv.gz", "0,1\n0,2\n1,x\n");
  fails({"edge.csv.gz' line 3", "expected two node ids"});
  write_text(root / "raw" / "edge.csv.gz", "0,1\n0,7\n1,0\n");
  fails({"edge.csv.gz' line 2", "node id 7 is not below the 5 nodes"});
  write_text(root / "raw" / "edge.csv.gz", "0,1\n");
  write_text(root / "raw" / "node-feat.csv.gz", "0.5,1\n-2,0\n0\n3.25,1e-3\n7,-0\n");
  fails({"node-feat.csv.gz' line 3", "has 1 values, the first row has 2"});
  write_text(root / "raw" / "node-feat.csv.gz", "0.5,1\n-2,0\n0,nan\n3.25,1e-3\n7,-0\n");
  fails({"node-feat.csv.gz' line 3", "not a finite number"});
  write_text(root / "raw" / "node-feat.csv.gz", "0.5,1\n-2,0\n");
  fails({"node-feat.csv.gz'", "has 2 rows", "says 5 nodes"});
  write_text(root / "raw" / "node-feat.csv.gz", "0,0\n0,0\n0,0\n0,0\n0,0\n");
  write_text(root / "split" / "time" / "valid.csv.gz", "1\n1\n");
  fails({"valid.csv.gz'", "node id 1 appears twice"});
  write_text(root / "split" / "time" / "valid.csv.gz", "1\n");
  write_text(root / "split" / "time" / "test.csv", "4\n0\n");
  fails({"'bad'", "disjoint"});
  expect_error([&] { (void)gnn::load_dataset(dir.path().string()); }, {"no raw/edge.csv.gz"});
}

// ---------------------------------------------------------------------------
// Edge lists

TEST(EdgeList, ReadsCommentsHeaderSeparatorsAndGzip) {
  TempDir dir;
  const std::string text =
      "# a comment\nsource target\n4 0\n0\t1\n\n% another\n0,2\n1 0\n2 2\n3 4\r\n4,3\n";
  write_text(dir.file("g.tsv"), text);
  write_text(dir.file("g.txt.gz"), text);
  LoadOptions dense;
  dense.features = FeatureFormat::Dense;
  for (const char* name : {"g.tsv", "g.txt.gz"}) {
    SCOPED_TRACE(name);
    const Dataset d = gnn::load_dataset(dir.file(name).string(), dense);
    EXPECT_EQ(d.name, "g");
    EXPECT_EQ(d.num_nodes, kN);
    EXPECT_EQ(d.edge_index, expected_edge_index());
    EXPECT_EQ(d.features.dense, in_degrees(kEdges, kN));
    EXPECT_EQ(d.num_classes, 0);
    EXPECT_NE(d.note.find("no labels"), std::string::npos) << d.note;
  }
}

TEST(EdgeList, BadLinesNameTheFileAndLine) {
  TempDir dir;
  const auto fails = [&](const std::string& text, std::initializer_list<std::string> parts) {
    write_text(dir.file("bad.csv"), text);
    expect_error([&] { (void)gnn::load_dataset(dir.file("bad.csv").string()); }, parts);
  };
  fails("0,1\n# c\n2,x\n", {"bad.csv' line 3", "expected two node ids", "'2,x'"});
  fails("0 1\nsrc dst\n", {"bad.csv' line 2"});  // a header only comes first
  fails("src,dst\n0\n", {"bad.csv' line 2"});
  fails("0,-1\n", {"bad.csv' line 1", "node id -1"});
}

// Lines that do not parse are errors naming the line; a header is only the first
// data line and only when it names columns (no field is a number).
TEST(EdgeList, HeaderGuessByteOrderMarkNulAndEmptyFiles) {
  TempDir dir;
  const std::string path = dir.file("e.csv").string();
  const auto load = [&](const std::string& text) {
    write_text(path, text);
    return gnn::load_dataset(path);
  };
  const auto fails = [&](const std::string& text, std::initializer_list<std::string> parts) {
    write_text(path, text);
    expect_error([&] { (void)gnn::load_dataset(path); }, parts);
  };
  // A UTF-8 byte-order mark before the first edge: skipped, the edge kept.
  EXPECT_EQ(load("\xEF\xBB\xBF" "0,1\n1,2\n").num_edges(), 2);
  EXPECT_EQ(load("\xEF\xBB\xBF" "src,dst\n0,1\n").num_edges(), 1);
  // A first line with a number in it is data, never a header.
  fails("0.5,1\n2,3\n", {"e.csv' line 1", "expected two node ids"});
  fails("0x1,2\n2,3\n", {"e.csv' line 1", "expected two node ids"});
  fails("1.0,2.0\n", {"e.csv' line 1", "expected two node ids"});
  fails("src,2\n0,1\n", {"e.csv' line 1"});
  // A NUL byte merges nothing: the line is named.
  fails(std::string("0,1\0junk\n5,6\n", 14), {"e.csv' line 1", "NUL byte"});
  // Files without a single edge.
  fails("", {"e.csv'", "holds no edges"});
  fails("src,dst\n", {"e.csv'", "holds no edges"});
  fails("# only a comment\n\n", {"e.csv'", "holds no edges"});
  expect_error([&] { (void)gnn::load_dataset("/dev/null"); }, {"/dev/null", "holds no edges"});
}

TEST(EdgeList, ThirdColumnIsTheEdgeWeightSortedWithItsEdge) {
  TempDir dir;
  const std::string path = dir.file("w.csv").string();
  write_text(path, "source,target,weight\n2,0,0.5\n0,1,-2\n0,1,3e2\n1 2 1\n");
  const Dataset d = gnn::load_dataset(path);
  EXPECT_EQ(d.edge_index, (std::vector<int64_t>{0, 0, 1, 2, 1, 1, 2, 0}));
  EXPECT_EQ(d.edge_weight, (std::vector<float>{-2.0f, 300.0f, 1.0f, 0.5f})) << "equal edges keep file order";
  EXPECT_NE(d.note.find("edge weights from the third column"), std::string::npos) << d.note;
  const auto fails = [&](const std::string& text, std::initializer_list<std::string> parts) {
    write_text(path, text);
    expect_error([&] { (void)gnn::load_dataset(path); }, parts);
  };
  fails("0,1,1\n1,2\n", {"w.csv' line 2", "has no weight, but line 1 has one"});
  fails("0,1\n1,2,0.5\n", {"w.csv' line 2", "has a third column (a weight), but line 1 has none"});
  fails("0,1,nan\n", {"w.csv' line 1", "weight 'nan' is not a finite number"});
  fails("0,1,2,3\n", {"w.csv' line 1", "got 4 field(s)"});
  // Self loops removed on request carry the weights of the others along.
  write_text(path, "0,0,9\n0,1,1\n1,1,8\n1,0,2\n");
  LoadOptions no_loops;
  no_loops.remove_self_loops = true;
  const Dataset e = gnn::load_dataset(path, no_loops);
  EXPECT_EQ(e.edge_index, (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(e.edge_weight, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_NE(e.note.find("4 edges as stored, 2 self loops removed"), std::string::npos) << e.note;
  // Symmetrising would have to invent the added edges' weights: refused, named.
  LoadOptions undirected;
  undirected.symmetrize = true;
  expect_error([&] { (void)gnn::load_dataset(path, undirected); }, {"w.csv'", "cannot symmetrise", "weights"});
}

TEST(EdgeList, SymmetrisedOnRequestWithDuplicatesMerged) {
  TempDir dir;
  const std::string path = dir.file("d.csv").string();
  write_text(path, "0,1\n0,2\n1,0\n2,2\n3,4\n4,3\n4,0\n4,0\n");  // kEdges plus a duplicate
  const Dataset stored = gnn::load_dataset(path);
  EXPECT_EQ(stored.num_edges(), 8) << "as stored: the duplicate and the self loop stay";
  EXPECT_NE(stored.note.find("8 edges as stored (directed: 2 edges without its reverse; symmetrize=True or "
                             "edgewise-train --undirected 1 makes it undirected)"),
            std::string::npos)
      << stored.note;
  LoadOptions undirected;
  undirected.symmetrize = true;
  undirected.remove_self_loops = true;
  const Dataset d = gnn::load_dataset(path, undirected);
  EXPECT_EQ(d.edge_index, edge_index_of(kUndirectedEdges));
  EXPECT_NE(d.note.find("8 stored edges \u2192 8 directed edges after symmetrising (A + A^T, duplicates merged, 1 "
                        "self loop removed), as asked"),
            std::string::npos)
      << d.note;
  undirected.remove_self_loops = false;
  const Dataset loops = gnn::load_dataset(path, undirected);
  EXPECT_EQ(loops.num_edges(), 9) << "the self loop kept once";
  // A symmetric graph gets no note about its edges.
  write_text(path, "0,1\n1,0\n");
  EXPECT_EQ(gnn::load_dataset(path).note.find("as stored"), std::string::npos);
}

// Node counts and ids are checked against LoadOptions::max_nodes before anything
// is sized by them (a small file must not allocate gigabytes).
TEST(NodeCounts, HugeCountsAndIdsAreRefusedBeforeAllocation) {
  TempDir dir;
  const std::string csv = dir.file("big.csv").string();
  write_text(csv, "0,4294967295\n");
  expect_error([&] { (void)gnn::load_dataset(csv); }, {"big.csv' line 1", "node id 4294967295", "max_nodes"});
  write_text(csv, "0,777777777\n");
  LoadOptions small;
  small.max_nodes = 1 << 20;
  expect_error([&] { (void)gnn::load_dataset(csv, small); }, {"big.csv' line 1", "1048576 allowed"});

  Keys coo = {{"row", i64({})},
              {"col", i64({})},
              {"data", f32({})},
              {"shape", i64({int64_t{1} << 33, int64_t{1} << 33})},
              {"format", text_npy({"coo"}, false, true)}};
  const std::string sp = write_npz(dir, "huge_sp.npz", coo);
  expect_error([&] { (void)gnn::load_dataset(sp); }, {"huge_sp.npz", "key 'shape' (8589934592)", "max_nodes"});
  coo["shape"] = i64({0, 0});
  const std::string zero = write_npz(dir, "zero_sp.npz", coo);
  expect_error([&] { (void)gnn::load_dataset(zero); }, {"zero_sp.npz", "key 'shape' (0) makes no nodes"});

  const auto root = dir.file("ogbn_big");
  write_ogb_folder(root, false);
  write_text(root / "raw" / "num-node-list.csv.gz", "1099511627776\n");
  expect_error([&] { (void)gnn::load_dataset(root.string()); }, {"num-node-list", "(1099511627776)", "max_nodes"});
  write_ogb_folder(root, false);
  std::filesystem::remove(root / "raw" / "num-node-list.csv.gz");
  std::filesystem::remove(root / "raw" / "node-feat.csv.gz");
  std::filesystem::remove(root / "raw" / "node-label.csv.gz");
  write_text(root / "raw" / "edge.csv.gz", "0,1\n9223372036854775807,0\n");
  expect_error([&] { (void)gnn::load_dataset(root.string()); },
               {"edge.csv.gz' line 2", "node id 9223372036854775807", "max_nodes"});
}

// OGB marks unlabelled nodes with nan: they belong to no generated split.
TEST(OgbRawFolder, UnlabelledNodesAreInNoGeneratedSplit) {
  TempDir dir;
  const auto root = dir.file("ogbn_nan");
  write_ogb_folder(root, false);
  write_text(root / "raw" / "node-label.csv.gz", "1\nnan\n1\nnan\n0\n");
  const Dataset d = gnn::load_dataset(root.string());
  std::vector<int64_t> all = d.train_idx;
  all.insert(all.end(), d.valid_idx.begin(), d.valid_idx.end());
  all.insert(all.end(), d.test_idx.begin(), d.test_idx.end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_NE(d.note.find("2 unlabelled node(s) in no split"), std::string::npos) << d.note;
}

// One spec parser for every kind of data: parsed whole, each field named when bad.
TEST(DatasetSpec, ParsesEveryFormWholeAndNamesTheBadField) {
  using Kind = gnn::DatasetSpec::Kind;
  EXPECT_EQ(gnn::parse_dataset_spec("auto").kind, Kind::Auto);
  EXPECT_EQ(gnn::parse_dataset_spec("synthetic").kind, Kind::Synthetic);
  EXPECT_FALSE(gnn::parse_dataset_spec("synthetic").size.has_value());
  EXPECT_EQ(gnn::parse_dataset_spec("synthetic:500").size.value_or(0), 500);
  const gnn::DatasetSpec r = gnn::parse_dataset_spec("rmat:100:1000:8:3");
  EXPECT_EQ(r.kind, Kind::Rmat);
  EXPECT_EQ(r.rmat.num_nodes, 100);
  EXPECT_EQ(r.rmat.num_edges, 1000);
  EXPECT_EQ(r.rmat.num_features, 8);
  EXPECT_EQ(r.rmat.num_classes, 3);
  EXPECT_EQ(gnn::parse_dataset_spec("rmat:100:1000:8").rmat.num_classes, 16);
  EXPECT_EQ(gnn::parse_dataset_spec("cora").kind, Kind::File);
  EXPECT_EQ(gnn::parse_dataset_spec("dir/x.npz").kind, Kind::File);
  const auto refused = [](const char* spec, const std::string& part) {
    try {
      (void)gnn::parse_dataset_spec(spec);
      ADD_FAILURE() << spec << ": no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused("rmat:100:1e3:4", "'1e3' is not a whole integer");
  refused("rmat:5x:10:2", "'5x' is not a whole integer");
  refused("rmat:100:10", "got 2 numbers");
  refused("rmat:0:10:2", "N (0) must lie in");
  refused("synthetic:2x", "'2x' is not a whole integer");
  refused("synthetic:0", "N (0) must lie in");
  refused("", "the spec is empty");
}

// One registry of readers for node datasets and graph collections.
TEST(DatasetReaders, OneRegistryPicksTheReaderForNodeAndGraphData) {
  std::set<std::string> names;
  for (const gnn::DatasetReader& r : gnn::dataset_readers()) names.insert(r.name);
  EXPECT_EQ(names, (std::set<std::string>{"ogb-npz", "gnn-benchmark", "scipy-sparse", "ogb-raw", "edge-list",
                                          "graph-npz", "tu"}));
  TempDir dir;
  const std::string bench = write_npz(dir, "bench.npz", gnn_benchmark_keys());
  EXPECT_STREQ(gnn::reader_for(bench, gnn::DataKind::Node).name, "gnn-benchmark");
  write_text(dir.file("e.csv"), "0,1\n");
  EXPECT_STREQ(gnn::reader_for(dir.file("e.csv"), gnn::DataKind::Node).name, "edge-list");
  std::filesystem::create_directories(dir.file("ogbn") / "raw");
  EXPECT_STREQ(gnn::reader_for(dir.file("ogbn"), gnn::DataKind::Node).name, "ogb-raw");
  EXPECT_STREQ(gnn::reader_for(dir.file("ogbn"), gnn::DataKind::Graph).name, "tu");
  EXPECT_STREQ(gnn::reader_for(bench, gnn::DataKind::Graph).name, "graph-npz");
  // Generated collections through the same spec parser: "synthetic:G" graphs.
  EXPECT_EQ(gnn::load_graph_dataset("synthetic:40", 1).num_graphs(), 40);
  EXPECT_THROW((void)gnn::load_graph_dataset("rmat:10:10:1"), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
