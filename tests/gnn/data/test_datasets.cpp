// Tests of datasets: CsrMatrix, load_dataset on archives written here (formats,
// the Auto switch, every validation error, name lookup), the real datasets when
// present (counts against the datasets README), and the synthetic generators
// (determinism across seeds and thread counts, structure, statistics).
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "npz_writer.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::CsrMatrix;
using gnn::DataFileError;
using gnn::Dataset;
using gnn::FeatureFormat;
using gnn::LoadOptions;

template <class E, class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> parts) {
  try {
    fn();
    ADD_FAILURE() << "nothing thrown";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class EnvGuard {
 public:
  EnvGuard(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~EnvGuard() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Runs `fn` with OpenMP limited to `threads`.
template <class Fn>
auto with_threads(int threads, Fn&& fn) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(threads);
  auto result = fn();
  omp_set_num_threads(before);
  return result;
}

// ---- CsrMatrix ------------------------------------------------------------------

std::vector<float> sparse_dense(std::mt19937_64& rng, int64_t rows, int64_t cols, double density) {
  std::vector<float> x(static_cast<size_t>(rows * cols), 0.0f);
  std::uniform_real_distribution<double> u(0, 1);
  for (auto& v : x)
    if (u(rng) < density) v = static_cast<float>(u(rng) * 10 - 5);
  return x;
}

TEST(CsrMatrix, FromDenseToDenseRoundTripsAtBoundarySizes) {
  auto rng = rng_for(10);
  for (int64_t rows : {0, 1, 7, 33}) {
    for (int64_t cols : {0, 1, 15, 16, 17, 65}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      const std::vector<float> dense = sparse_dense(rng, rows, cols, 0.2);
      const CsrMatrix m = CsrMatrix::from_dense({dense.data(), rows, cols});
      EXPECT_NO_THROW(m.validate());
      EXPECT_EQ(m.rows, rows);
      EXPECT_EQ(m.cols, cols);
      const int64_t nnz = std::count_if(dense.begin(), dense.end(), [](float v) { return v != 0; });
      EXPECT_EQ(m.nnz(), nnz);
      EXPECT_TRUE(equal_exactly(m.to_dense(), dense));
      const double expect = rows * cols != 0 ? static_cast<double>(nnz) / static_cast<double>(rows * cols) : 0.0;
      EXPECT_DOUBLE_EQ(m.density(), expect);
      EXPECT_DOUBLE_EQ(gnn::density({dense.data(), rows, cols}), expect);
    }
  }
}

TEST(CsrMatrix, ZeroMeansCompareEqualToZeroAndNaNIsKept) {
  const std::vector<float> dense = {0.0f, -0.0f, std::nanf(""), 1.0f, -std::numeric_limits<float>::infinity(), 0.0f};
  const CsrMatrix m = CsrMatrix::from_dense({dense.data(), 2, 3});
  EXPECT_EQ(m.offsets, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(m.indices, (std::vector<int32_t>{2, 0, 1}));
  EXPECT_TRUE(std::isnan(m.values[0]));
  EXPECT_EQ(m.values[1], 1.0f);
  const std::vector<float> back = m.to_dense();
  EXPECT_EQ(std::signbit(back[1]), false);  // -0.0 comes back as +0.0
}

TEST(CsrMatrix, ValidateNamesEveryBrokenRule) {
  CsrMatrix good;
  good.rows = 2;
  good.cols = 4;
  good.offsets = {0, 2, 3};
  good.indices = {1, 3, 0};
  good.values = {1, 2, 3};
  EXPECT_NO_THROW(good.validate());
  auto broken = [&](auto change, const std::string& part) {
    CsrMatrix m = good;
    change(m);
    expect_error<std::invalid_argument>([&] { m.validate("feat"); }, {"feat", part});
  };
  broken([](CsrMatrix& m) { m.offsets = {0, 2}; }, "offsets.size() (2) must equal rows + 1 (3)");
  broken([](CsrMatrix& m) { m.offsets[0] = 1; }, "offsets[0] (1) must be 0");
  broken([](CsrMatrix& m) { m.offsets[2] = 2; }, "offsets[rows] (2) must equal nnz (3)");
  broken([](CsrMatrix& m) { m.offsets = {0, 4, 3}; }, "nondecreasing");
  broken([](CsrMatrix& m) { m.indices[2] = 4; }, "indices[2] (4) in row 1 must lie in [0, 4)");
  broken([](CsrMatrix& m) { m.indices[1] = 1; }, "strictly ascending");
  broken([](CsrMatrix& m) { m.values.pop_back(); }, "values.size() (2)");
}

// ---- load_dataset on written archives ----------------------------------------------

// The parts of an OGB-layout archive; tests change one and write it.
struct Parts {
  int64_t num_nodes = 6;
  std::vector<int64_t> edge_index = {0, 1, 1, 2, 4, 5, /**/ 1, 0, 2, 1, 5, 4};  // [2, 6]
  std::vector<int64_t> edge_shape = {2, 6};
  std::vector<float> feat = {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0};  // [6, 4]
  std::vector<int64_t> feat_shape = {6, 4};
  std::vector<int64_t> labels = {0, 1, 2, 0, 1, 2};
  std::vector<int64_t> train = {0, 1}, valid = {2}, test = {3, 5};
  std::map<std::string, Bytes> extra;  // more members, or replacements
  std::vector<std::string> drop;       // members to leave out
  bool deflate = true;
};

std::string write_parts(const TempDir& dir, const Parts& p, const std::string& name = "graph.npz") {
  std::map<std::string, Bytes> m = {
      {"num_nodes", npy_of("<i8", std::vector<int64_t>{p.num_nodes}, {})},
      {"edge_index", npy_of("<i8", p.edge_index, p.edge_shape)},
      {"node_feat", npy_of("<f4", p.feat, p.feat_shape)},
      {"node_label", npy_of("<i8", p.labels, {static_cast<int64_t>(p.labels.size())})},
      {"train_idx", npy_of("<i8", p.train, {static_cast<int64_t>(p.train.size())})},
      {"valid_idx", npy_of("<i8", p.valid, {static_cast<int64_t>(p.valid.size())})},
      {"test_idx", npy_of("<i8", p.test, {static_cast<int64_t>(p.test.size())})}};
  for (const auto& [k, v] : p.extra) m[k] = v;
  for (const auto& k : p.drop) m.erase(k);
  std::vector<ZipMember> members;
  for (const auto& [k, v] : m) members.push_back({k + ".npy", v, p.deflate});
  const auto path = dir.file(name);
  write_file(path, make_zip(members, {.zip64_local = true}));
  return path.string();
}

TEST(LoadDataset, ReadsEveryKeyInEveryFeatureFormat) {
  TempDir dir;
  const Parts p;
  const std::string path = write_parts(dir, p);
  for (FeatureFormat f : {FeatureFormat::Dense, FeatureFormat::Sparse, FeatureFormat::Auto}) {
    SCOPED_TRACE(gnn::to_string(f));
    const Dataset d = gnn::load_dataset(path, {.features = f});
    EXPECT_EQ(d.name, "graph");
    EXPECT_EQ(d.num_nodes, 6);
    EXPECT_EQ(d.num_classes, 3);
    EXPECT_EQ(d.edge_index, p.edge_index);
    EXPECT_EQ(d.num_edges(), 6);
    EXPECT_EQ(std::vector<int64_t>(d.src().begin(), d.src().end()), (std::vector<int64_t>{0, 1, 1, 2, 4, 5}));
    EXPECT_EQ(d.labels, p.labels);
    EXPECT_EQ(d.train_idx, p.train);
    EXPECT_EQ(d.valid_idx, p.valid);
    EXPECT_EQ(d.test_idx, p.test);
    EXPECT_EQ(d.features.rows, 6);
    EXPECT_EQ(d.features.cols, 4);
    // 4 of 24 nonzero: density 1/6 > 0.1, so Auto is dense here.
    EXPECT_EQ(d.features.is_sparse(), f == FeatureFormat::Sparse);
    EXPECT_EQ(d.features.nnz(), 4);
    Dataset copy = d;
    copy.features.to_dense();
    EXPECT_TRUE(equal_exactly(copy.features.dense, p.feat));
  }
  EXPECT_TRUE(gnn::load_dataset(path, {.features = FeatureFormat::Auto, .sparse_threshold = 0.2}).features.is_sparse());
  EXPECT_FALSE(gnn::load_dataset(path, {.features = FeatureFormat::Auto, .sparse_threshold = 0.1}).features.is_sparse());
}

TEST(LoadDataset, AutoSwitchesToDenseMidStreamAndAgreesWithBothFormats) {
  // 2400 x 1000 floats (9.6 MB; the CSR path reads pieces of 262 rows): rows
  // below 1200 are sparse, the rest dense, so Auto builds CSR for the first
  // pieces, switches part-way and copies the later pieces. Small integer values
  // keep deflate quick.
  auto rng = rng_for(11);
  const int64_t N = 2400, F = 1000;
  Parts p;
  p.num_nodes = N;
  p.feat = sparse_dense(rng, 1200, F, 0.001);
  std::uniform_int_distribution<int> digit(0, 4);
  for (int64_t i = 0; i < (N - 1200) * F; ++i) p.feat.push_back(static_cast<float>(digit(rng)));
  p.feat_shape = {N, F};
  p.labels.assign(N, 1);
  p.labels[0] = 0;
  TempDir dir;
  const std::string path = write_parts(dir, p);
  const Dataset dense = gnn::load_dataset(path, {.features = FeatureFormat::Dense});
  const Dataset sparse = gnn::load_dataset(path, {.features = FeatureFormat::Sparse});
  const Dataset automatic = gnn::load_dataset(path, {.features = FeatureFormat::Auto});
  EXPECT_FALSE(dense.features.is_sparse());
  EXPECT_TRUE(sparse.features.is_sparse());
  EXPECT_FALSE(automatic.features.is_sparse());
  EXPECT_TRUE(equal_exactly(dense.features.dense, p.feat));
  EXPECT_TRUE(equal_exactly(automatic.features.dense, p.feat));
  EXPECT_TRUE(equal_exactly(sparse.features.csr.to_dense(), p.feat));
  EXPECT_NO_THROW(sparse.features.csr.validate());
  const CsrMatrix expect = CsrMatrix::from_dense({p.feat.data(), N, F});
  EXPECT_EQ(sparse.features.csr.offsets, expect.offsets);
  EXPECT_EQ(sparse.features.csr.indices, expect.indices);
}

TEST(LoadDataset, OtherDtypesAndLayoutsAreConverted) {
  TempDir dir;
  Parts p;
  // float64 features in Fortran order, int32 edges, uint8 labels [N, 1], int16 splits.
  std::vector<double> fortran;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 6; ++i) fortran.push_back(p.feat[static_cast<size_t>(i * 4 + j)]);
  p.extra["node_feat"] = npy_of("<f8", fortran, {6, 4}, {.fortran_order = true});
  p.extra["edge_index"] = npy_of("<i4", std::vector<int32_t>(p.edge_index.begin(), p.edge_index.end()), {2, 6});
  p.extra["node_label"] = npy_of("|u1", std::vector<uint8_t>{0, 1, 2, 0, 1, 2}, {6, 1});
  p.extra["train_idx"] = npy_of("<i2", std::vector<int16_t>{0, 1}, {2});
  p.extra["num_nodes"] = npy_of("<i4", std::vector<int32_t>{6}, {1});
  p.extra["num_classes"] = npy_of("<i8", std::vector<int64_t>{5}, {});
  p.deflate = false;
  const std::string path = write_parts(dir, p);
  for (FeatureFormat f : {FeatureFormat::Dense, FeatureFormat::Sparse}) {
    Dataset d = gnn::load_dataset(path, {.features = f});
    EXPECT_EQ(d.edge_index, p.edge_index);
    EXPECT_EQ(d.labels, p.labels);
    EXPECT_EQ(d.num_classes, 5);  // from the num_classes key
    EXPECT_EQ(d.train_idx, p.train);
    d.features.to_dense();
    EXPECT_TRUE(equal_exactly(d.features.dense, p.feat));
  }
}

TEST(LoadDataset, OptionalKeysMayBeAbsent) {
  TempDir dir;
  Parts p;
  p.drop = {"node_feat", "node_label", "train_idx", "valid_idx", "test_idx"};
  const Dataset d = gnn::load_dataset(write_parts(dir, p), {.features = FeatureFormat::Sparse});
  EXPECT_EQ(d.num_nodes, 6);
  EXPECT_EQ(d.num_classes, 0);
  EXPECT_TRUE(d.labels.empty());
  EXPECT_TRUE(d.train_idx.empty());
  EXPECT_EQ(d.features.rows, 6);
  EXPECT_EQ(d.features.cols, 0);
  EXPECT_NO_THROW(d.validate());
}

TEST(LoadDataset, InconsistentArchivesAreRejectedWithTheKeyAndValue) {
  TempDir dir;
  const auto fails = [&](Parts p, std::initializer_list<std::string> parts) {
    const std::string path = write_parts(dir, p, "bad.npz");
    expect_error<DataFileError>([&] { (void)gnn::load_dataset(path); }, parts);
  };
  Parts p;
  p.edge_index[9] = 6;  // destination of edge 3
  fails(p, {"bad.npz", "edge_index[1, 3] (6) must lie in [0, 6)"});
  p = {};
  p.edge_index[0] = -1;
  fails(p, {"edge_index[0, 0] (-1)"});
  p = {};
  p.edge_shape = {3, 4};
  fails(p, {"key 'edge_index' must have shape (2, E), got (3, 4)"});
  p = {};
  p.drop = {"edge_index"};
  fails(p, {"required key 'edge_index' is missing"});
  p = {};
  p.drop = {"num_nodes"};
  fails(p, {"required key 'num_nodes' is missing"});
  p = {};
  p.labels[4] = -3;
  fails(p, {"key 'node_label' holds labels[4] (-3) outside [0, num_classes)"});
  p = {};
  p.extra["num_classes"] = npy_of("<i8", std::vector<int64_t>{2}, {});
  fails(p, {"key 'node_label' holds labels[2] (2) outside [0, num_classes = 2)"});
  p = {};
  p.labels.pop_back();
  fails(p, {"key 'node_label' must have shape (N,) or (N, 1) with N = 6, got (5,)"});
  p = {};
  p.extra["node_label"] = npy_of("<f4", std::vector<float>(6, 0.5f), {6});
  fails(p, {"key 'node_label' must hold integers"});
  p = {};
  p.train = {1, 0};
  fails(p, {"train_idx must be strictly ascending, but train_idx[0] (1) >= train_idx[1] (0)"});
  p = {};
  p.valid = {2, 2};
  fails(p, {"valid_idx must be strictly ascending"});
  p = {};
  p.test = {1, 5};
  fails(p, {"node 1 is in both train_idx and test_idx"});
  p = {};
  p.test = {3, 6};
  fails(p, {"test_idx[1] (6) must lie in [0, 6)"});
  p = {};
  p.feat_shape = {4, 6};
  fails(p, {"key 'node_feat' must have shape (N, F) with N = 6, got (4, 6)"});
  p = {};
  p.num_nodes = -2;
  fails(p, {"key 'num_nodes' (-2) makes no nodes"});
}

TEST(LoadDataset, NonFiniteFeaturesAreNamedWithTheFirstPosition) {
  TempDir dir;
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    Parts p;
    p.feat[2 * 4 + 1] = bad;  // [2, 1]
    p.feat[4 * 4 + 3] = bad;  // [4, 3]: a later one, not reported
    const std::string path = write_parts(dir, p, "nan.npz");
    for (FeatureFormat f : {FeatureFormat::Dense, FeatureFormat::Sparse, FeatureFormat::Auto}) {
      SCOPED_TRACE(gnn::to_string(f));
      expect_error<DataFileError>([&] { (void)gnn::load_dataset(path, {.features = f}); },
                                  {"nan.npz", "key 'node_feat'", "non-finite", "at [2, 1]"});
    }
  }
  // float64 input goes through the conversion path.
  Parts p;
  std::vector<double> feat(p.feat.begin(), p.feat.end());
  feat[5] = std::numeric_limits<double>::quiet_NaN();  // [1, 1]
  p.extra["node_feat"] = npy_of("<f8", feat, {6, 4});
  const std::string path = write_parts(dir, p, "nan64.npz");
  expect_error<DataFileError>([&] { (void)gnn::load_dataset(path); }, {"key 'node_feat'", "at [1, 1]"});
}

TEST(LoadDataset, ClassCountsAreCheckedOrSanelyInferred) {
  TempDir dir;
  const auto fails = [&](Parts p, std::initializer_list<std::string> parts) {
    const std::string path = write_parts(dir, p, "labels.npz");
    expect_error<DataFileError>([&] { (void)gnn::load_dataset(path); }, parts);
  };
  Parts p;
  p.labels[3] = int64_t{1} << 40;  // inferred: 2^40 + 1 classes for 6 nodes
  fails(p, {"key 'node_label'", "labels[3] (1099511627776)", "more than the 6 nodes"});
  p.extra["num_classes"] = npy_of("<i8", std::vector<int64_t>{3}, {});
  fails(p, {"key 'node_label'", "labels[3] (1099511627776) outside [0, num_classes = 3)"});
  p = {};
  p.extra["num_classes"] = npy_of("<i8", std::vector<int64_t>{int64_t{1} << 40}, {});
  fails(p, {"key 'num_classes' (1099511627776) must lie in [1, "});
  p.extra["num_classes"] = npy_of("<i8", std::vector<int64_t>{0}, {});
  fails(p, {"key 'num_classes' (0) must lie in [1, "});
  p = {};
  p.labels[5] = 5;  // max + 1 = 6 classes for 6 nodes: allowed
  EXPECT_EQ(gnn::load_dataset(write_parts(dir, p, "six.npz")).num_classes, 6);
}

TEST(LoadDataset, AnEmptySplitKeyIsNamed) {
  TempDir dir;
  for (const char* key : {"train_idx", "valid_idx", "test_idx"}) {
    Parts p;
    (std::string(key) == "train_idx" ? p.train : std::string(key) == "valid_idx" ? p.valid : p.test).clear();
    const std::string path = write_parts(dir, p, "split.npz");
    expect_error<DataFileError>([&] { (void)gnn::load_dataset(path); },
                                {"key '" + std::string(key) + "' is empty"});
  }
}

TEST(Dataset, ValidateRejectsNonFiniteFeaturesInEitherFormat) {
  Dataset d;
  d.name = "mem";
  d.num_nodes = 3;
  d.features.rows = 3;
  d.features.cols = 2;
  d.features.dense = {0, 1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 5};
  expect_error<std::invalid_argument>([&] { d.validate(); }, {"dataset 'mem'", "features[1, 1] (nan) must be finite"});
  d.features.to_sparse();
  expect_error<std::invalid_argument>([&] { d.validate(); }, {"features[1, 1] (nan) must be finite"});
  d.features.to_dense();
  d.features.dense[3] = 3;
  EXPECT_NO_THROW(d.validate());
}

TEST(LoadDataset, NamesAreLookedUpInTheDataDirectory) {
  TempDir dir;
  write_parts(dir, Parts{}, "my_graph.npz");
  {
    EnvGuard env("EDGEWISE_DATA_DIR", dir.path().string());
    EXPECT_EQ(gnn::default_data_dir(), dir.path());
    EXPECT_EQ(gnn::resolve_dataset_path("My-Graph"), dir.file("my_graph.npz"));
    EXPECT_EQ(gnn::load_dataset("MY_GRAPH").num_nodes, 6);
    expect_error<DataFileError>([] { (void)gnn::load_dataset("cora_missing"); },
                                {"dataset 'cora_missing' not found", (dir.path() / "cora_missing.npz").string(),
                                 "EDGEWISE_DATA_DIR"});
  }
  {
    EnvGuard env("EDGEWISE_DATA_DIR", std::nullopt);
    EnvGuard xdg("XDG_CACHE_HOME", "/xdg/cache");
    EXPECT_EQ(gnn::default_data_dir(), std::filesystem::path("/xdg/cache/edgewise/datasets"));
    expect_error<DataFileError>([] { (void)gnn::load_dataset("cora"); },
                                {"/xdg/cache/edgewise/datasets/cora.npz", "EDGEWISE_DATA_DIR is not set",
                                 "Set EDGEWISE_DATA_DIR"});
  }
  {
    EnvGuard env("EDGEWISE_DATA_DIR", "");
    EnvGuard xdg("XDG_CACHE_HOME", std::nullopt);
    EnvGuard home("HOME", "/home/someone");
    EXPECT_EQ(gnn::default_data_dir(), std::filesystem::path("/home/someone/.cache/edgewise/datasets"));
  }
  // Paths are taken as given.
  EXPECT_EQ(gnn::load_dataset(dir.file("my_graph.npz").string()).name, "my_graph");
  expect_error<DataFileError>([&] { (void)gnn::load_dataset((dir.path() / "absent.npz").string()); },
                              {"no such file", "absent.npz"});
  expect_error<std::invalid_argument>([] { (void)gnn::load_dataset("x", {.sparse_threshold = 2}); },
                                      {"sparse_threshold (2)"});
  expect_error<std::invalid_argument>([] { (void)gnn::parse_feature_format("csv"); }, {"'csv'"});
  EXPECT_EQ(gnn::parse_feature_format("Sparse"), FeatureFormat::Sparse);
}

// ---- the real datasets (../shared/datasets), when present -------------------------

std::filesystem::path real_data_dir() {
  std::vector<std::filesystem::path> candidates;
  if (const char* env = std::getenv("EDGEWISE_DATA_DIR"); env && *env) candidates.emplace_back(env);
  candidates.push_back(std::filesystem::path(__FILE__).parent_path() / "../../../shared/datasets");
  candidates.emplace_back("/work/shared/datasets");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c / "cora.npz", ec)) return c;
  }
  return {};
}

struct Expected {
  const char* name;
  int64_t nodes, edges, features, classes, train, valid, test, isolated;
  double density;
  // Of the feature nonzeros (row r, column c, value v), computed once with numpy
  // from the files whose sha256 the README lists: count, sum v, sum (r + 1) c.
  int64_t nnz;
  double value_sum;
  int64_t position_sum;
};

class RealDataset : public testing::TestWithParam<Expected> {};

TEST_P(RealDataset, MatchesTheReadmeTable) {
  const Expected& x = GetParam();
  const std::filesystem::path dir = real_data_dir();
  if (dir.empty()) GTEST_SKIP() << "real datasets not found (set EDGEWISE_DATA_DIR to ../shared/datasets)";
  const std::filesystem::path file = dir / (std::string(x.name) + ".npz");
  if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " not present";
  const Dataset d = gnn::load_dataset(file.string(), {.features = FeatureFormat::Sparse});
  EXPECT_EQ(d.name, x.name);
  EXPECT_EQ(d.num_nodes, x.nodes);
  EXPECT_EQ(d.num_edges(), x.edges);
  EXPECT_EQ(d.features.cols, x.features);
  EXPECT_EQ(d.num_classes, x.classes);
  EXPECT_EQ(static_cast<int64_t>(d.train_idx.size()), x.train);
  EXPECT_EQ(static_cast<int64_t>(d.valid_idx.size()), x.valid);
  EXPECT_EQ(static_cast<int64_t>(d.test_idx.size()), x.test);
  EXPECT_NEAR(d.features.density(), x.density, 1e-6);
  EXPECT_NO_THROW(d.features.csr.validate());
  const CsrMatrix& m = d.features.csr;
  double value_sum = 0;
  int64_t position_sum = 0;
  for (int64_t r = 0; r < m.rows; ++r) {
    for (int64_t k = m.offsets[static_cast<size_t>(r)]; k < m.offsets[static_cast<size_t>(r) + 1]; ++k) {
      value_sum += m.values[static_cast<size_t>(k)];
      position_sum += (r + 1) * m.indices[static_cast<size_t>(k)];
    }
  }
  EXPECT_EQ(m.nnz(), x.nnz);
  EXPECT_EQ(value_sum, x.value_sum);
  EXPECT_EQ(position_sum, x.position_sum);

  // Edges: sorted by (source, destination), no self loops or duplicates, symmetric.
  const auto src = d.src(), dst = d.dst();
  std::vector<int64_t> degree(static_cast<size_t>(d.num_nodes), 0);
  for (int64_t e = 0; e < d.num_edges(); ++e) {
    ASSERT_NE(src[e], dst[e]) << "self loop at " << e;
    if (e > 0) {
      ASSERT_TRUE(std::pair(src[e - 1], dst[e - 1]) < std::pair(src[e], dst[e])) << "order at " << e;
    }
    ++degree[static_cast<size_t>(src[e])];
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t e = 0; e < d.num_edges(); ++e) pairs.emplace_back(src[e], dst[e]);
  for (int64_t e = 0; e < d.num_edges(); ++e)
    ASSERT_TRUE(std::binary_search(pairs.begin(), pairs.end(), std::pair(dst[e], src[e]))) << "no reverse of " << e;
  EXPECT_EQ(std::count(degree.begin(), degree.end(), 0), x.isolated);

  if (std::string(x.name) == "citeseer") {
    // The 15 test-range ids without features: all-zero rows, label 0, in no split.
    for (int64_t v : {2407, 2489, 2553, 2682, 2781, 2953, 3042, 3063, 3212, 3214, 3250, 3292, 3305, 3306, 3309}) {
      const auto& off = d.features.csr.offsets;
      EXPECT_EQ(off[static_cast<size_t>(v) + 1], off[static_cast<size_t>(v)]) << v;
      EXPECT_EQ(d.labels[static_cast<size_t>(v)], 0) << v;
      for (const auto* split : {&d.train_idx, &d.valid_idx, &d.test_idx})
        EXPECT_FALSE(std::binary_search(split->begin(), split->end(), v)) << v;
    }
  }
  // Dense and CSR loads agree (Coauthor-CS's dense matrix is 499 MB: skipped).
  if (x.nodes * x.features * 4 < (int64_t{100} << 20)) {
    const Dataset dense = gnn::load_dataset(file.string(), {.features = FeatureFormat::Dense});
    EXPECT_TRUE(equal_exactly(d.features.csr.to_dense(), dense.features.dense));
    EXPECT_EQ(dense.edge_index, d.edge_index);
    const Dataset automatic = gnn::load_dataset(file.string());
    EXPECT_EQ(automatic.features.is_sparse(), x.density <= 0.1);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Readme, RealDataset,
    testing::Values(
        Expected{"cora", 2708, 10556, 1433, 7, 140, 500, 1000, 0, 0.012683, 49216, 49216.0, 52471258658},
        Expected{"citeseer", 3327, 9104, 3703, 6, 120, 500, 1000, 48, 0.008536, 105165, 105165.0, 317642994161},
        Expected{"amazon_photo", 7650, 238162, 745, 8, 160, 240, 7250, 115, 0.347398, 1979909, 1979909.0,
                 2812629705283},
        Expected{"coauthor_cs", 18333, 163788, 6805, 15, 300, 450, 17583, 0, 0.008754, 1092079, 1741991.0,
                 33757480384973}),
    [](const testing::TestParamInfo<Expected>& info) { return std::string(info.param.name); });

// ---- generators ---------------------------------------------------------------------

// Sorted by (source, destination) strictly (so no duplicates), ids in range.
::testing::AssertionResult is_canonical(const Dataset& d, bool allow_self_loops = false) {
  const auto src = d.src(), dst = d.dst();
  for (int64_t e = 0; e < d.num_edges(); ++e) {
    if (src[e] < 0 || src[e] >= d.num_nodes || dst[e] < 0 || dst[e] >= d.num_nodes)
      return ::testing::AssertionFailure() << "edge " << e << " out of range";
    if (!allow_self_loops && src[e] == dst[e]) return ::testing::AssertionFailure() << "self loop at " << e;
    if (e > 0 && !(std::pair(src[e - 1], dst[e - 1]) < std::pair(src[e], dst[e])))
      return ::testing::AssertionFailure() << "not strictly sorted at " << e;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult is_symmetric(const Dataset& d) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t e = 0; e < d.num_edges(); ++e) pairs.emplace_back(d.src()[e], d.dst()[e]);
  std::sort(pairs.begin(), pairs.end());
  for (const auto& [u, v] : pairs)
    if (!std::binary_search(pairs.begin(), pairs.end(), std::pair(v, u)))
      return ::testing::AssertionFailure() << "(" << u << ", " << v << ") has no reverse";
  return ::testing::AssertionSuccess();
}

void expect_same(const Dataset& a, const Dataset& b) {
  EXPECT_EQ(a.edge_index, b.edge_index);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
  EXPECT_EQ(a.features.dense, b.features.dense);
  EXPECT_EQ(a.features.csr.offsets, b.features.csr.offsets);
  EXPECT_EQ(a.features.csr.indices, b.features.csr.indices);
}

double edge_homophily(const Dataset& d) {
  int64_t same = 0;
  for (int64_t e = 0; e < d.num_edges(); ++e)
    same += d.labels[static_cast<size_t>(d.src()[e])] == d.labels[static_cast<size_t>(d.dst()[e])];
  return d.num_edges() ? static_cast<double>(same) / static_cast<double>(d.num_edges()) : 0.0;
}

TEST(PlantedPartition, DefaultIsCoraLikeAndValid) {
  const uint64_t seed = test_seed();
  const Dataset d = gnn::planted_partition({}, seed);
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.num_nodes, 2708);
  EXPECT_EQ(d.num_classes, 7);
  EXPECT_TRUE(is_canonical(d));
  EXPECT_TRUE(is_symmetric(d));
  const double degree = static_cast<double>(d.num_edges()) / static_cast<double>(d.num_nodes);
  EXPECT_NEAR(degree, 4.0, 0.25);
  EXPECT_NEAR(edge_homophily(d), gnn::PlantedPartitionParams{}.homophily, 0.03);
  EXPECT_TRUE(d.features.is_sparse());
  EXPECT_NEAR(d.features.density(), 0.0127, 0.002);
  EXPECT_EQ(d.train_idx.size(), 140u);
  EXPECT_EQ(d.valid_idx.size(), 500u);
  EXPECT_EQ(d.test_idx.size(), 1000u);
  std::vector<int> per_class(7, 0);
  for (int64_t v : d.train_idx) ++per_class[static_cast<size_t>(d.labels[static_cast<size_t>(v)])];
  EXPECT_EQ(per_class, std::vector<int>(7, 20));
  // Label-correlated features: a class's nodes use their own topic's words far
  // more than chance (1/7 of the vocabulary).
  const auto& m = d.features.csr;
  int64_t in_topic = 0;
  for (int64_t v = 0; v < d.num_nodes; ++v) {
    const int64_t y = d.labels[static_cast<size_t>(v)], lo = y * 1433 / 7, hi = (y + 1) * 1433 / 7;
    for (int64_t k = m.offsets[static_cast<size_t>(v)]; k < m.offsets[static_cast<size_t>(v) + 1]; ++k)
      in_topic += m.indices[static_cast<size_t>(k)] >= lo && m.indices[static_cast<size_t>(k)] < hi;
  }
  const double topical = static_cast<double>(in_topic) / static_cast<double>(m.nnz());
  const double signal = gnn::PlantedPartitionParams{}.feature_signal;
  EXPECT_NEAR(topical, signal + (1 - signal) / 7, 0.03);
}

TEST(PlantedPartition, DeterministicForASeedAndAnyThreadCount) {
  gnn::PlantedPartitionParams p;
  p.num_nodes = 5000;
  p.num_classes = 5;
  p.average_degree = 6;
  const Dataset one = with_threads(1, [&] { return gnn::planted_partition(p, 7); });
  const Dataset two = with_threads(2, [&] { return gnn::planted_partition(p, 7); });
  const Dataset three = with_threads(3, [&] { return gnn::planted_partition(p, 7); });
  expect_same(one, two);
  expect_same(one, three);
  const Dataset other = gnn::planted_partition(p, 8);
  EXPECT_NE(other.edge_index, one.edge_index);
  EXPECT_NE(other.labels, one.labels);
}

TEST(PlantedPartition, HomophilyAndDegreeFollowTheParameters) {
  for (double h : {0.0, 0.2, 0.5, 0.95}) {
    SCOPED_TRACE(h);
    gnn::PlantedPartitionParams p;
    p.num_nodes = 4000;
    p.num_classes = 4;
    p.average_degree = 10;
    p.homophily = h;
    p.num_features = 0;
    const Dataset d = gnn::planted_partition(p, test_seed() + 1);
    EXPECT_TRUE(is_canonical(d));
    EXPECT_NEAR(edge_homophily(d), h, 0.02);
    EXPECT_NEAR(static_cast<double>(d.num_edges()) / 4000.0, 10.0, 0.4);
    EXPECT_EQ(d.features.cols, 0);
  }
}

TEST(PlantedPartition, SmallGraphsClampTheSplitAndDenseFeaturesWork) {
  gnn::PlantedPartitionParams p;
  p.num_nodes = 60;
  p.num_classes = 3;
  p.average_degree = 3;
  p.num_features = 30;
  p.feature_density = 0.2;
  p.features = FeatureFormat::Dense;
  const Dataset d = gnn::planted_partition(p, 1);
  EXPECT_NO_THROW(d.validate());
  EXPECT_FALSE(d.features.is_sparse());
  EXPECT_EQ(d.features.dense.size(), 60u * 30u);
  EXPECT_EQ(d.train_idx.size() + d.valid_idx.size() + d.test_idx.size(), 60u);
  EXPECT_TRUE(d.test_idx.empty() || d.valid_idx.size() == 60u - d.train_idx.size() - d.test_idx.size());
  const Dataset one = gnn::planted_partition({.num_nodes = 1, .num_classes = 1, .average_degree = 0}, 3);
  EXPECT_EQ(one.num_edges(), 0);
  EXPECT_NO_THROW(one.validate());
}

TEST(PlantedPartition, BadParametersAreNamed) {
  using P = gnn::PlantedPartitionParams;
  const auto fails = [](P p, const std::string& part) {
    expect_error<std::invalid_argument>([&] { (void)gnn::planted_partition(p); }, {"planted_partition", part});
  };
  fails({.num_nodes = 0}, "num_nodes (0)");
  fails({.num_nodes = 5, .num_classes = 6}, "num_classes (6)");
  fails({.homophily = 1.5}, "homophily (1.5)");
  fails({.average_degree = -1}, "average_degree (-1)");
  fails({.num_nodes = 10, .num_classes = 2, .average_degree = 20}, "must be <= 1");
  fails({.num_features = 3}, "num_features (3)");
  fails({.feature_density = 2}, "feature_density (2)");
  fails({.train_per_class = -1}, "train_per_class");
}

TEST(Rmat, DeterministicForASeedAndAnyThreadCount) {
  gnn::RmatOptions o;
  o.symmetrize = true;
  o.num_features = 4;
  o.num_classes = 3;
  const Dataset one = with_threads(1, [&] { return gnn::rmat_graph(3000, 40000, 0.57, 0.19, 0.19, 5, o); });
  const Dataset two = with_threads(2, [&] { return gnn::rmat_graph(3000, 40000, 0.57, 0.19, 0.19, 5, o); });
  const Dataset four = with_threads(4, [&] { return gnn::rmat_graph(3000, 40000, 0.57, 0.19, 0.19, 5, o); });
  expect_same(one, two);
  expect_same(one, four);
  EXPECT_NE(gnn::rmat_graph(3000, 40000, 0.57, 0.19, 0.19, 6, o).edge_index, one.edge_index);
}

TEST(Rmat, OptionsShapeTheEdgeList) {
  const int64_t N = 1000, E = 20000;  // N not a power of two: ids must stay below it
  gnn::RmatOptions raw{.remove_self_loops = false, .symmetrize = false, .deduplicate = false};
  const Dataset all = gnn::rmat_graph(N, E, 0.45, 0.2, 0.2, 1, raw);
  EXPECT_EQ(all.num_edges(), E);  // nothing removed: every draw is kept
  EXPECT_TRUE(std::is_sorted(all.edge_index.begin(), all.edge_index.begin() + E));
  const auto self_loops = [](const Dataset& d) {
    int64_t n = 0;
    for (int64_t e = 0; e < d.num_edges(); ++e) n += d.src()[e] == d.dst()[e];
    return n;
  };
  EXPECT_GT(self_loops(all), 0);
  for (int64_t e = 0; e < all.num_edges(); ++e) ASSERT_LT(std::max(all.src()[e], all.dst()[e]), N);

  const Dataset clean = gnn::rmat_graph(N, E, 0.45, 0.2, 0.2, 1);
  EXPECT_TRUE(is_canonical(clean));
  EXPECT_LT(clean.num_edges(), E);
  // The cleaned list is exactly the raw one without loops and repeats.
  std::vector<std::pair<int64_t, int64_t>> expect;
  for (int64_t e = 0; e < E; ++e)
    if (all.src()[e] != all.dst()[e]) expect.emplace_back(all.src()[e], all.dst()[e]);
  expect.erase(std::unique(expect.begin(), expect.end()), expect.end());
  ASSERT_EQ(clean.num_edges(), static_cast<int64_t>(expect.size()));
  for (int64_t e = 0; e < clean.num_edges(); ++e)
    ASSERT_EQ(std::pair(clean.src()[e], clean.dst()[e]), expect[static_cast<size_t>(e)]);

  const Dataset sym = gnn::rmat_graph(N, E, 0.45, 0.2, 0.2, 1, {.symmetrize = true});
  EXPECT_TRUE(is_canonical(sym));
  EXPECT_TRUE(is_symmetric(sym));
  const Dataset loops = gnn::rmat_graph(N, E, 0.45, 0.2, 0.2, 1, {.remove_self_loops = false, .symmetrize = true});
  EXPECT_TRUE(is_canonical(loops, /*allow_self_loops=*/true));
  EXPECT_EQ(self_loops(loops), [&] {
    std::vector<int64_t> v;
    for (int64_t e = 0; e < E; ++e)
      if (all.src()[e] == all.dst()[e]) v.push_back(all.src()[e]);
    std::sort(v.begin(), v.end());
    return static_cast<int64_t>(std::unique(v.begin(), v.end()) - v.begin());
  }());
}

std::vector<int64_t> out_degrees(const Dataset& d) {
  std::vector<int64_t> deg(static_cast<size_t>(d.num_nodes), 0);
  for (int64_t u : d.src()) ++deg[static_cast<size_t>(u)];
  return deg;
}

TEST(Rmat, SkewedProbabilitiesGiveHubsAndUniformOnesDoNot) {
  const int64_t N = 1 << 14, E = 1 << 18;
  const Dataset skew = gnn::rmat_graph(N, E, 0.57, 0.19, 0.19, test_seed());
  const auto deg = out_degrees(skew);
  const double mean = static_cast<double>(skew.num_edges()) / static_cast<double>(N);
  EXPECT_GT(static_cast<double>(*std::max_element(deg.begin(), deg.end())), 20 * mean);
  const Dataset flat = gnn::rmat_graph(N, E, 0.25, 0.25, 0.25, test_seed());
  const auto flat_deg = out_degrees(flat);
  const double flat_mean = static_cast<double>(flat.num_edges()) / static_cast<double>(N);
  EXPECT_LT(static_cast<double>(*std::max_element(flat_deg.begin(), flat_deg.end())), 3 * flat_mean);
}

TEST(Rmat, ScramblingOnlyRelabelsNodes) {
  // The id bijection keeps the degree multiset; unscrambled hubs sit at low ids.
  const int64_t N = 3000, E = 50000;
  const Dataset plain = gnn::rmat_graph(N, E, 0.6, 0.15, 0.15, 9, {.scramble_ids = false});
  const Dataset mixed = gnn::rmat_graph(N, E, 0.6, 0.15, 0.15, 9, {.scramble_ids = true});
  EXPECT_EQ(plain.num_edges(), mixed.num_edges());
  auto a = out_degrees(plain), b = out_degrees(mixed);
  EXPECT_EQ(std::max_element(a.begin(), a.end()) - a.begin(), 0);
  EXPECT_NE(a, b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
}

TEST(Rmat, FeaturesLabelsAndSplit) {
  const Dataset d = gnn::rmat_graph(2000, 10000, 0.57, 0.19, 0.19, 3,
                                    {.num_features = 8, .num_classes = 5, .train_fraction = 0.5, .valid_fraction = 0.25});
  EXPECT_NO_THROW(d.validate());
  EXPECT_EQ(d.features.dense.size(), 2000u * 8u);
  for (float x : d.features.dense) ASSERT_TRUE(x >= -1.0f && x < 1.0f);
  EXPECT_EQ(d.num_classes, 5);
  EXPECT_EQ(d.train_idx.size() + d.valid_idx.size() + d.test_idx.size(), 2000u);
  EXPECT_NEAR(static_cast<double>(d.train_idx.size()), 1000, 100);
  EXPECT_NEAR(static_cast<double>(d.valid_idx.size()), 500, 80);
  const Dataset bare = gnn::rmat_graph(1, 5, 0.57, 0.19, 0.19, 3);
  EXPECT_EQ(bare.num_edges(), 0);  // one node: every draw is a self loop
  EXPECT_TRUE(bare.labels.empty());
  EXPECT_EQ(gnn::rmat_graph(64, 0, 0.57, 0.19, 0.19, 3).num_edges(), 0);
}

TEST(Rmat, BadParametersAreNamed) {
  const auto fails = [](auto fn, const std::string& part) {
    expect_error<std::invalid_argument>(fn, {"rmat_graph", part});
  };
  fails([] { (void)gnn::rmat_graph(0, 10); }, "num_nodes (0)");
  fails([] { (void)gnn::rmat_graph(10, -1); }, "num_edges (-1)");
  fails([] { (void)gnn::rmat_graph(10, 10, 0.6, 0.3, 0.3); }, "a + b + c <= 1");
  fails([] { (void)gnn::rmat_graph(10, 10, -0.1, 0.3, 0.3); }, "must lie in [0, 1]");
  fails([] { (void)gnn::rmat_graph(10, 10, 0.57, 0.19, 0.19, 0, {.num_features = -1}); }, "num_features (-1)");
  fails([] { (void)gnn::rmat_graph(10, 10, 0.57, 0.19, 0.19, 0, {.train_fraction = 0.9, .valid_fraction = 0.2}); },
        "sum <= 1");
}

}  // namespace
}  // namespace edgewise::test
