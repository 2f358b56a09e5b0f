// Global pooling (forward and backward against double references, with an empty
// graph), batch norm, fold splits, and a short GIN graph-classification run on synthetic data.
#include <gtest/gtest.h>

#include <omp.h>

#include <algorithm>
#include <set>

#include "edgewise/gnn/nn/batch_norm.hpp"
#include "edgewise/gnn/train/graph_classification.hpp"
#include "edgewise/gnn/message_passing/pooling.hpp"
#include "gradcheck.hpp"
#include "segment_reduce_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Variable;
using PoolingTest = DeviceTest;
using BatchNormTest = DeviceTest;

// Graph offsets with an empty graph (rows: 3, 0, 1, 4).
const std::vector<int64_t> kOffsets = {0, 3, 3, 4, 8};
constexpr int64_t kRows = 8, kCols = 3;

Flat pool_ref(const Flat& x, ReduceOp op) {
  return reference::segment_reduce_ref<double>(x, kCols, kOffsets, op).out;
}

// Every op of the list, including those whose gradient needs the forward's output
// (mul, var, std): a backward that treated them as sum would fail here.
TEST_P(PoolingTest, EveryOpMatchesTheReferenceForwardAndBackward) {
  const gnn::IndexTensor offsets =
      gnn::IndexTensor::from_host(kOffsets, static_cast<int64_t>(kOffsets.size()), 1, device());
  for (ReduceOp op : kAllReduceOps) {
    GradCase c;
    c.name = std::string(to_string(op));
    c.inputs = {{kRows, kCols}};
    // Away from 0 so that mul's quotient rule and std's clamp stay smooth.
    c.input_lo = 0.5;
    c.input_hi = 1.5;
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

// Training-mode batch norm in double: per column (x - mean) / sqrt(var + eps) * w + b.
Flat batch_norm_ref(const Flat& x, const Flat& w, const Flat& b, int64_t n, int64_t c, double eps) {
  Flat y(x.size());
  for (int64_t k = 0; k < c; ++k) {
    double mean = 0, var = 0;
    for (int64_t r = 0; r < n; ++r) mean += x[r * c + k];
    mean /= static_cast<double>(n);
    for (int64_t r = 0; r < n; ++r) var += (x[r * c + k] - mean) * (x[r * c + k] - mean);
    var /= static_cast<double>(n);
    for (int64_t r = 0; r < n; ++r) y[r * c + k] = (x[r * c + k] - mean) / std::sqrt(var + eps) * w[k] + b[k];
  }
  return y;
}

TEST_P(BatchNormTest, MatchesTheReferenceAndKeepsRunningStatistics) {
  constexpr int64_t n = 6, c = 3;
  gnn::BatchNorm1d norm(c, 1e-5f, 0.1f, device());
  std::vector<gnn::Variable> params = norm.parameters();  // weight, bias (shared with the module)
  GradCase gc;
  gc.name = "batch_norm";
  gc.inputs = {{n, c}, {1, c}, {1, c}};
  gc.forward = [&](const std::vector<Variable>& v) {
    // The module's weight and bias take the random values of inputs 1 and 2.
    for (size_t i = 0; i < 2; ++i)
      params[i].mutable_value() = gnn::Tensor::from_host(v[i + 1].value().to_host_vector(), 1, c, device());
    return norm.forward(v[0]);
  };
  gc.differentiable = {true, false, false};
  gc.reference = [](const std::vector<Flat>& x) { return batch_norm_ref(x[0], x[1], x[2], n, c, 1e-5); };
  gc.forward_tol = 1e-4;
  gc.grad_tol = 5e-3;
  check_gradients(gc, device(), 21);
  // Parameter gradients for a ones seed: d/db = n per column, d/dw = sum of xhat = 0.
  params[0].zero_grad();
  params[1].zero_grad();
  Variable x(gnn::Tensor::from_host(std::vector<float>{1, 2, 3, 4, 5, 7, 2, 2, 2, 0, 1, 0, 3, 1, 4, 1, 5, 9}, n, c,
                                    device()),
             true);
  Variable y = norm.forward(x);
  y.backward(gnn::Tensor::full(n, c, 1.0f, device()));
  for (float g : params[1].grad().to_host_vector()) EXPECT_FLOAT_EQ(g, static_cast<float>(n));
  for (float g : params[0].grad().to_host_vector()) EXPECT_NEAR(g, 0.0f, 1e-4f);
  // A fresh module after one pass: running mean 0.1 * mean, running var 0.9 + 0.1 * unbiased var.
  gnn::BatchNorm1d fresh(c, 1e-5f, 0.1f, device());
  fresh.forward(x);
  const std::vector<float> xs0 = x.value().to_host_vector();
  for (int64_t k = 0; k < c; ++k) {
    double mean = 0, ss = 0;
    for (int64_t r = 0; r < n; ++r) mean += xs0[r * c + k] / static_cast<double>(n);
    for (int64_t r = 0; r < n; ++r) ss += (xs0[r * c + k] - mean) * (xs0[r * c + k] - mean);
    EXPECT_NEAR(fresh.running_mean().to_host_vector()[k], 0.1 * mean, 1e-5);
    EXPECT_NEAR(fresh.running_var().to_host_vector()[k], 0.9 + 0.1 * ss / (n - 1), 1e-5);
  }
  norm.eval();
  const std::vector<float> mean = norm.running_mean().to_host_vector(), var = norm.running_var().to_host_vector();
  const std::vector<float> w = norm.parameters()[0].value().to_host_vector();
  const std::vector<float> b = norm.parameters()[1].value().to_host_vector();
  const std::vector<float> xs = x.value().to_host_vector(), ys = norm.forward(x).value().to_host_vector();
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t k = i % c;
    EXPECT_NEAR(ys[i], (xs[i] - mean[k]) / std::sqrt(var[k] + 1e-5f) * w[k] + b[k], 1e-5) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, PoolingTest, testing::ValuesIn(all_devices()), device_name);
INSTANTIATE_TEST_SUITE_P(Devices, BatchNormTest, testing::ValuesIn(all_devices()), device_name);

TEST(GraphClassification, FoldSplitUsesTheNextFoldForValidation) {
  const std::vector<int64_t> folds = {0, 1, 2, 0, 1, 2, 2};
  const gnn::FoldSplit s = gnn::fold_split(folds, 3, 2);
  EXPECT_EQ(s.test, (std::vector<int64_t>{2, 5, 6}));
  EXPECT_EQ(s.valid, (std::vector<int64_t>{0, 3}));  // fold (2 + 1) % 3 = 0
  EXPECT_EQ(s.train, (std::vector<int64_t>{1, 4}));
  EXPECT_THROW(gnn::fold_split(folds, 3, 3), std::invalid_argument);
  EXPECT_THROW(gnn::fold_split({0, 0, 1, 2}, 4, 3), std::invalid_argument);  // no graph in fold 3
}

class GinRun : public testing::TestWithParam<bool> {};

TEST_P(GinRun, LearnsTheSyntheticTaskFarAboveChance) {
  // One thread, as edgewise-train --task graph: tiny minibatches, and no stalls on a busy machine.
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(1);
  gnn::GraphDataset data = gnn::synthetic_graph_dataset({.num_graphs = 200}, 5);
  gnn::add_one_hot_degree_features(data);
  const std::vector<int64_t> folds = gnn::stratified_folds(data.labels, 5, 1);
  gnn::GinGraphConfig config;
  config.in_features = data.num_features;
  config.hidden_features = 16;
  config.layers = 2;
  config.batch_norm = GetParam();
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
  omp_set_num_threads(saved_threads);
}

INSTANTIATE_TEST_SUITE_P(BatchNorm, GinRun, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "On" : "Off"; });

}  // namespace
}  // namespace edgewise::test
