// Graph collections: the TU reader and the graph-property npz reader on files
// written here (good and malformed), one-hot degree features, stratified folds,
// the synthetic generator, and minibatches of graphs against naive references.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "edgewise/gnn/graph/graph_batch.hpp"
#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/gnn/data/npz_writer.hpp"
#include "npz_writer.hpp"

namespace edgewise::test {
namespace {

using gnn::DataFileError;
using gnn::GraphDataset;

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Three graphs (2, 3 and 1 nodes): TU ids 1-2 | 3-5 | 6; labels -1, 1, -1.
struct TuFiles {
  std::string a = "1, 2\n2, 1\n3, 4\n4, 5\n5, 3\n";
  std::string indicator = "1\n1\n2\n2\n2\n3\n";
  std::string graph_labels = "-1\n1\n-1\n";
  std::string node_labels = "7\n3\n3\n7\n9\n3\n";
  std::string attributes = "0.5, 1\n1.5, 2\n2.5, 3\n3.5, 4\n4.5, 5\n5.5, 6\n";
  void write(const std::filesystem::path& dir, const std::string& ds) const {
    write_text(dir / (ds + "_A.txt"), a);
    write_text(dir / (ds + "_graph_indicator.txt"), indicator);
    write_text(dir / (ds + "_graph_labels.txt"), graph_labels);
    if (!node_labels.empty()) write_text(dir / (ds + "_node_labels.txt"), node_labels);
    if (!attributes.empty()) write_text(dir / (ds + "_node_attributes.txt"), attributes);
  }
};

TEST(TuDataset, ReadsGraphsLocalEdgesLabelsAndFeatures) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("TOY"));
  TuFiles{}.write(dir.file("TOY"), "TOY");
  const GraphDataset d = gnn::load_tu_dataset(dir.file("TOY"));
  EXPECT_EQ(d.name, "TOY");
  EXPECT_EQ(d.num_graphs(), 3);
  EXPECT_EQ(d.node_offsets, (std::vector<int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(d.edge_offsets, (std::vector<int64_t>{0, 2, 5, 5}));
  EXPECT_EQ(d.src, (std::vector<int32_t>{0, 1, 0, 1, 2}));
  EXPECT_EQ(d.dst, (std::vector<int32_t>{1, 0, 1, 2, 0}));
  EXPECT_EQ(d.labels, (std::vector<int64_t>{0, 1, 0}));  // -1, 1 -> 0, 1
  EXPECT_EQ(d.num_classes, 2);
  // 2 attributes, then one-hot of node labels {3, 7, 9} -> columns 0, 1, 2.
  ASSERT_EQ(d.num_features, 5);
  const std::vector<float> row0 = {0.5f, 1, 0, 1, 0}, row4 = {4.5f, 5, 0, 0, 1};
  EXPECT_EQ(std::vector<float>(d.features.begin(), d.features.begin() + 5), row0);
  EXPECT_EQ(std::vector<float>(d.features.begin() + 20, d.features.begin() + 25), row4);
  // The same files through their prefix path and through the dispatcher.
  EXPECT_EQ(gnn::load_tu_dataset(dir.file("TOY") / "TOY").src, d.src);
  EXPECT_EQ(gnn::load_graph_dataset((dir.file("TOY") / "TOY").string()).num_features, 5);
}

TEST(TuDataset, WithoutNodeDataTheDispatcherAddsOneHotDegrees) {
  TempDir dir;
  TuFiles files;
  files.node_labels.clear();
  files.attributes.clear();
  files.write(dir.path(), "P");
  const GraphDataset raw = gnn::load_tu_dataset(dir.file("P"));
  EXPECT_EQ(raw.num_features, 0);
  const GraphDataset d = gnn::load_graph_dataset(dir.file("P").string());
  // In-degrees: graph 1: 1, 1; graph 2: 1, 1, 1; graph 3: 0 -> max 1, two columns.
  ASSERT_EQ(d.num_features, 2);
  EXPECT_EQ(d.features, (std::vector<float>{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 1, 0}));
}

void expect_tu_error(const TuFiles& files, const std::string& file, const std::string& fragment) {
  TempDir dir;
  files.write(dir.path(), "BAD");
  try {
    gnn::load_tu_dataset(dir.file("BAD"));
    ADD_FAILURE() << "no error; expected one naming " << file << " and '" << fragment << "'";
  } catch (const DataFileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(TuDataset, MalformedFilesNameTheFileAndLine) {
  TuFiles f;
  f.a = "1, 2\n2, 7\n";
  expect_tu_error(f, "BAD_A.txt", "line 2: node id 7 is outside [1, 6]");
  f = TuFiles{};
  f.a = "1, 2\n0, 1\n";
  expect_tu_error(f, "BAD_A.txt", "line 2: node id 0");
  f = TuFiles{};
  f.a = "1, 3\n";
  expect_tu_error(f, "BAD_A.txt", "line 1: edge 1 -> 3 joins graphs 1 and 2");
  f = TuFiles{};
  f.a = "1 2 3\n";
  expect_tu_error(f, "BAD_A.txt", "line 1: expected two node ids");
  f = TuFiles{};
  f.indicator = "1\n2\n1\n2\n2\n3\n";
  expect_tu_error(f, "BAD_graph_indicator.txt", "line 3: graph id 1 after 2");
  f = TuFiles{};
  f.indicator = "1\n1\n2\n2\n2\n4\n";
  expect_tu_error(f, "BAD_graph_indicator.txt", "line 6: graph id 4 is outside [1, 3]");
  f = TuFiles{};
  f.graph_labels = "1\nx\n1\n";
  expect_tu_error(f, "BAD_graph_labels.txt", "line 2: expected an integer");
  f = TuFiles{};
  f.node_labels = "1\n1\n";
  expect_tu_error(f, "BAD_node_labels.txt", "2 labels for 6 nodes");
  f = TuFiles{};
  f.attributes = "1, 2\n1, 2\n1\n1, 2\n1, 2\n1, 2\n";
  expect_tu_error(f, "BAD_node_attributes.txt", "line 3: 1 attributes, the first line has 2");
  f = TuFiles{};
  f.attributes = "1, 2\n1, 2\n1, nan\n1, 2\n1, 2\n1, 2\n";
  expect_tu_error(f, "BAD_node_attributes.txt", "line 3: attribute 'nan' is not a finite number");
  TempDir empty;
  EXPECT_THROW(gnn::load_tu_dataset(empty.file("NOPE")), DataFileError);
  // Graph 2 skipped by the indicator: a labelled graph without nodes.
  f = TuFiles{};
  f.a = "1, 2\n2, 1\n";
  f.indicator = "1\n1\n3\n3\n3\n3\n";
  expect_tu_error(f, "BAD_graph_indicator.txt", "graph 2 (of the 3 in");
  // The last graph has no nodes.
  f = TuFiles{};
  f.indicator = "1\n1\n2\n2\n2\n2\n";
  expect_tu_error(f, "BAD_graph_indicator.txt", "graph 3 (of the 3 in");
}

// More distinct node labels than a one-hot may hold: one index column, not N x c.
TEST(TuDataset, ManyDistinctNodeLabelsBecomeOneIndexColumn) {
  constexpr int64_t kNodes = 2000;  // every node its own label: 2000 > 1024
  TuFiles f;
  f.a = "1, 2\n";
  f.indicator.clear();
  f.node_labels.clear();
  for (int64_t i = 0; i < kNodes; ++i) {
    f.indicator += i < kNodes / 2 ? "1\n" : "2\n";
    f.node_labels += std::to_string(5000 - 2 * i) + "\n";  // descending: index = kNodes - 1 - i
  }
  f.graph_labels = "0\n1\n";
  f.attributes.clear();
  TempDir dir;
  f.write(dir.path(), "MANY");
  const GraphDataset d = gnn::load_tu_dataset(dir.file("MANY"));
  ASSERT_EQ(d.num_features, 1);
  ASSERT_EQ(d.features.size(), static_cast<size_t>(kNodes));
  for (int64_t i = 0; i < kNodes; ++i) ASSERT_EQ(d.features[static_cast<size_t>(i)], static_cast<float>(kNodes - 1 - i));
  EXPECT_NE(d.note.find("2000 distinct node labels"), std::string::npos) << d.note;
  // At the cap a one-hot is still made.
  f.node_labels.clear();
  for (int64_t i = 0; i < kNodes; ++i) f.node_labels += std::to_string(i % 1024) + "\n";
  f.write(dir.path(), "CAP");
  EXPECT_EQ(gnn::load_tu_dataset(dir.file("CAP")).num_features, 1024);
}

// Two graphs in the reddit_threads layout: a triangle-ish graph and a 2-node one.
gnn::NpzEntries graph_npz(std::vector<int64_t> edge_index = {0, 1, 2, 1, 0, 1, 0, 2, 0, 1},
                          std::vector<int64_t> edges = {3, 2}) {
  using gnn::npy_array;
  return {{"edge_index", npy_array(edge_index, {2, static_cast<int64_t>(edge_index.size() / 2)})},
          {"num_nodes_list", npy_array(std::vector<int64_t>{3, 2}, {2})},
          {"num_edges_list", npy_array(edges, {2})},
          {"graph_label", npy_array(std::vector<int64_t>{1, 0}, {2})},
          {"fold", npy_array(std::vector<int64_t>{0, 1}, {2})}};
}

TEST(GraphNpz, ReadsTheRedditThreadsLayout) {
  TempDir dir;
  gnn::write_npz(dir.file("tiny.npz").string(), graph_npz());
  const GraphDataset d = gnn::load_graph_npz(dir.file("tiny.npz").string());
  EXPECT_EQ(d.name, "tiny");
  EXPECT_EQ(d.node_offsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(d.edge_offsets, (std::vector<int64_t>{0, 3, 5}));
  EXPECT_EQ(d.src, (std::vector<int32_t>{0, 1, 2, 1, 0}));
  EXPECT_EQ(d.dst, (std::vector<int32_t>{1, 0, 2, 0, 1}));  // the self loop 2 -> 2 is kept
  EXPECT_EQ(d.labels, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(d.folds, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(d.num_features, 0);
  const GraphDataset with_features = gnn::load_graph_dataset(dir.file("tiny.npz").string());
  EXPECT_EQ(with_features.num_features, 2);  // every in-degree is 1 (the self loop counts once): columns 0..1
}

TEST(GraphNpz, MalformedArraysNameTheKeyAndGraph) {
  TempDir dir;
  const std::string path = dir.file("bad.npz").string();
  auto expect_error = [&](const gnn::NpzEntries& entries, const std::string& fragment) {
    gnn::write_npz(path, entries);
    try {
      gnn::load_graph_npz(path);
      ADD_FAILURE() << "no error; expected '" << fragment << "'";
    } catch (const DataFileError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.npz"), std::string::npos) << e.what();
    }
  };
  // Graph 1 has 2 nodes: a local id 2 leaves it.
  expect_error(graph_npz({0, 1, 2, 1, 0, 1, 0, 2, 2, 0}), "key 'edge_index': column 3 (1 -> 2) of graph 1");
  expect_error(graph_npz({0, 1, 2, 1, 0, 1, 0, 2, 0, 1}, {3, 3}), "num_edges_list sums to 6");
  gnn::NpzEntries missing = graph_npz();
  missing.erase(missing.begin() + 3);
  expect_error(missing, "missing key 'graph_label'");
  gnn::NpzEntries bad_fold = graph_npz();
  bad_fold[4].second = gnn::npy_array(std::vector<int64_t>{0, -1}, {2});
  expect_error(bad_fold, "key 'fold': graph 1 fold -1");
}

TEST(GraphDatasetTools, StratifiedFoldsAreBalancedPerClassAndSeeded) {
  std::vector<int64_t> labels;
  for (int i = 0; i < 103; ++i) labels.push_back(i % 3 == 0 ? 1 : 0);
  const std::vector<int64_t> folds = gnn::stratified_folds(labels, 10, 7);
  EXPECT_EQ(folds, gnn::stratified_folds(labels, 10, 7));
  EXPECT_NE(folds, gnn::stratified_folds(labels, 10, 8));
  std::map<std::pair<int64_t, int64_t>, int> count;  // (fold, label) -> graphs
  std::map<int64_t, int> per_fold;
  for (size_t g = 0; g < labels.size(); ++g) {
    ++count[{folds[g], labels[g]}];
    ++per_fold[folds[g]];
  }
  for (int64_t f = 0; f < 10; ++f) {
    EXPECT_GE(per_fold[f], 10);
    EXPECT_LE(per_fold[f], 11);
    const int positives = count[std::make_pair(f, int64_t{1})];  // 35 positives over 10 folds
    EXPECT_GE(positives, 3);
    EXPECT_LE(positives, 4);
  }
}

TEST(GraphDatasetTools, SyntheticGraphsAreValidDeterministicAndBalanced) {
  const GraphDataset a = gnn::synthetic_graph_dataset({.num_graphs = 40}, 3);
  const GraphDataset b = gnn::synthetic_graph_dataset({.num_graphs = 40}, 3);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.node_offsets, b.node_offsets);
  EXPECT_NE(a.src, gnn::synthetic_graph_dataset({.num_graphs = 40}, 4).src);
  EXPECT_EQ(std::count(a.labels.begin(), a.labels.end(), 1), 20);
  EXPECT_NO_THROW(a.validate());
}

// A dataset with an empty graph in the middle, features = global node id.
GraphDataset batching_fixture() {
  GraphDataset d = gnn::synthetic_graph_dataset({.num_graphs = 6, .min_nodes = 4, .max_nodes = 9}, 1);
  // Insert an empty graph as graph 2.
  d.node_offsets.insert(d.node_offsets.begin() + 3, d.node_offsets[2]);
  d.edge_offsets.insert(d.edge_offsets.begin() + 3, d.edge_offsets[2]);
  d.labels.insert(d.labels.begin() + 2, 1);
  d.num_features = 2;
  d.features.clear();
  for (int64_t i = 0; i < d.total_nodes(); ++i) {
    d.features.push_back(static_cast<float>(i));
    d.features.push_back(-static_cast<float>(i));
  }
  d.validate();
  return d;
}

TEST(GraphBatch, UnionOffsetsAndBatchVectorMatchANaiveMerge) {
  const GraphDataset d = batching_fixture();
  const std::vector<int64_t> ids = {5, 2, 0, 3, 0};  // an empty graph and a repeat
  const gnn::GraphBatch batch = gnn::make_graph_batch(d, ids);
  // Naive: offsets by summing node counts, edges shifted, features copied.
  std::vector<int64_t> offsets{0};
  std::multiset<std::pair<int64_t, int64_t>> edges;
  std::vector<float> x;
  std::vector<int32_t> batch_vector;
  for (size_t b = 0; b < ids.size(); ++b) {
    const int64_t g = ids[b];
    for (int64_t e = d.edge_offsets[g]; e < d.edge_offsets[g + 1]; ++e)
      edges.emplace(offsets.back() + d.src[e], offsets.back() + d.dst[e]);
    for (int64_t i = d.node_offsets[g]; i < d.node_offsets[g + 1]; ++i) {
      x.push_back(d.features[2 * i]);
      x.push_back(d.features[2 * i + 1]);
      batch_vector.push_back(static_cast<int32_t>(b));
    }
    offsets.push_back(offsets.back() + d.graph_nodes(g));
  }
  EXPECT_EQ(batch.graph_offsets.to_host_vector(), offsets);
  EXPECT_EQ(batch.batch.to_host_vector(), batch_vector);
  EXPECT_EQ(batch.x.to_host_vector(), x);
  EXPECT_EQ(batch.labels.to_host_vector(),
            (std::vector<int64_t>{d.labels[5], d.labels[2], d.labels[0], d.labels[3], d.labels[0]}));
  EXPECT_EQ(batch.graph.num_nodes(), offsets.back());
  const auto [src, dst] = batch.graph.coo();
  std::multiset<std::pair<int64_t, int64_t>> got;
  for (size_t e = 0; e < src.size(); ++e) got.emplace(src[e], dst[e]);
  EXPECT_EQ(got, edges);

  // The runs skip the empty graph (position 1).
  const gnn::BatchRuns runs = gnn::batch_runs(batch.batch);
  EXPECT_EQ(runs.graphs, (std::vector<int32_t>{0, 2, 3, 4}));
  EXPECT_EQ(runs.nodes, (std::vector<int64_t>{d.graph_nodes(5), d.graph_nodes(0), d.graph_nodes(3), d.graph_nodes(0)}));
  EXPECT_THROW(gnn::make_graph_batch(d, std::vector<int64_t>{0, 7}), std::invalid_argument);
}

TEST(GraphBatch, OffsetsFromAnUnsortedBatchVectorAreRefused) {
  const auto batch = gnn::IntTensor::from_host(std::vector<int32_t>{0, 1, 0}, 3, 1);
  EXPECT_THROW(gnn::graph_offsets_from_batch(batch, 2), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
