// Global pooling (forward and backward against double references, with an empty
// graph), fold splits, and a short GIN graph-classification run on synthetic data.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "edgewise/gnn/graph_classification.hpp"
#include "edgewise/gnn/pooling.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Variable;
using PoolingTest = DeviceTest;

// Graph offsets with an empty graph (rows: 3, 0, 1, 4).
const std::vector<int64_t> kOffsets = {0, 3, 3, 4, 8};
constexpr int64_t kRows = 8, kCols = 3;

Flat pool_ref(const Flat& x, ReduceOp op) {
  const int64_t graphs = static_cast<int64_t>(kOffsets.size()) - 1;
  Flat out(static_cast<size_t>(graphs * kCols), 0.0);
  for (int64_t g = 0; g < graphs; ++g) {
    for (int64_t c = 0; c < kCols; ++c) {
      double acc = op == ReduceOp::Max ? -1e300 : 0.0;
      for (int64_t r = kOffsets[g]; r < kOffsets[g + 1]; ++r) {
        const double v = x[static_cast<size_t>(r * kCols + c)];
        acc = op == ReduceOp::Max ? std::max(acc, v) : acc + v;
      }
      const int64_t n = kOffsets[g + 1] - kOffsets[g];
      if (n == 0) acc = 0;
      if (op == ReduceOp::Mean && n > 0) acc /= static_cast<double>(n);
      out[static_cast<size_t>(g * kCols + c)] = acc;
    }
  }
  return out;
}

TEST_P(PoolingTest, SumMeanAndMaxMatchTheReferenceForwardAndBackward) {
  const gnn::IndexTensor offsets =
      gnn::IndexTensor::from_host(kOffsets, static_cast<int64_t>(kOffsets.size()), 1, device());
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max}) {
    GradCase c;
    c.name = std::string(to_string(op));
    c.inputs = {{kRows, kCols}};
    c.forward = [&](const std::vector<Variable>& v) { return gnn::global_pool(v[0], offsets, op); };
    c.reference = [op](const std::vector<Flat>& x) { return pool_ref(x[0], op); };
    check_gradients(c, device(), 11 + static_cast<uint64_t>(op));
  }
}

TEST_P(PoolingTest, BadOffsetsAreNamed) {
  Variable x(gnn::Tensor::zeros(4, 2, device()), true);
  const auto short_end = gnn::IndexTensor::from_host(std::vector<int64_t>{0, 2, 3}, 3, 1, device());
  EXPECT_THROW(gnn::global_add_pool(x, short_end), std::invalid_argument);
  const auto wrong_shape = gnn::IndexTensor::from_host(std::vector<int64_t>{0, 4}, 1, 2, device());
  try {
    gnn::global_add_pool(x, wrong_shape);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("graph_offsets"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PoolingTest, testing::ValuesIn(all_devices()), device_name);

TEST(GraphClassification, FoldSplitUsesTheNextFoldForValidation) {
  const std::vector<int64_t> folds = {0, 1, 2, 0, 1, 2, 2};
  const gnn::FoldSplit s = gnn::fold_split(folds, 3, 2);
  EXPECT_EQ(s.test, (std::vector<int64_t>{2, 5, 6}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{0, 3}));  // fold (2 + 1) % 3 = 0
  EXPECT_EQ(s.train, (std::vector<int64_t>{1, 4}));
  EXPECT_THROW(gnn::fold_split(folds, 3, 3), std::invalid_argument);
  EXPECT_THROW(gnn::fold_split({0, 0, 1, 2}, 4, 3), std::invalid_argument);  // no graph in fold 3
}

TEST(GraphClassification, GinLearnsTheSyntheticTaskFarAboveChance) {
  gnn::GraphDataset data = gnn::synthetic_graph_dataset({.num_graphs = 200}, 5);
  gnn::add_one_hot_degree_features(data);
  const std::vector<int64_t> folds = gnn::stratified_folds(data.labels, 5, 1);
  gnn::GinGraphConfig config;
  config.in_features = data.num_features;
  config.hidden_features = 16;
  config.layers = 2;
  gnn::GraphTrainOptions options;
  options.epochs = 8;
  options.batch_size = 32;
  options.log_every = 0;
  const gnn::FoldResult r = gnn::train_graph_fold(data, gnn::fold_split(folds, 5, 0), config, options);
  EXPECT_GE(r.test_acc, 0.85);  // chance is 0.5
  EXPECT_GE(r.best_valid_acc, 0.85);
  EXPECT_GE(r.best_epoch, 1);
  // Seeded: the same run again gives the same numbers.
  EXPECT_EQ(gnn::train_graph_fold(data, gnn::fold_split(folds, 5, 0), config, options).test_acc, r.test_acc);
}

}  // namespace
}  // namespace edgewise::test
