// Minibatch training pieces: destination rows (forward/backward), feature gathering,
// the weighted loss, MiniBatchSAGE on full-neighbourhood blocks = full graph, and the
// MiniBatchTrainer learning the synthetic graph reproducibly.
#include <gtest/gtest.h>

#include <algorithm>
#include <omp.h>

#include <numeric>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "gnn_test_data.hpp"
#include "edgewise/gnn/sampling/csc_graph.hpp"
#include "edgewise/gnn/sampling/hop_sampler.hpp"
#include "edgewise/gnn/sampling/subgraph_blocks.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

TrainData small_task(Device device, FeatureFormat features = FeatureFormat::Sparse) {
  PlantedPartitionParams p;
  p.num_features = 200;
  p.feature_density = 0.05;
  p.features = features;
  PrepareOptions o;
  o.features = features;
  return planted_task(device, 600, 100, 300, p, o);
}

// Runs a scope with one OpenMP thread. The statistical and training loops below make
// thousands of calls on tiny inputs, where each parallel region costs a thread
// wake-up — on a shared 2-core runner, a scheduler time slice. Their results do not
// depend on the thread count (test_samplers' SameGeneratorStateGivesTheSameBatchAtAnyThreadCount and
// the kernels' own tests check that), so they run serially to keep the suite fast.
class SerialOpenMP {
 public:
  SerialOpenMP() : previous_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~SerialOpenMP() { omp_set_num_threads(previous_); }
  SerialOpenMP(const SerialOpenMP&) = delete;
  SerialOpenMP& operator=(const SerialOpenMP&) = delete;

 private:
  int previous_;
};

using MiniBatchTest = DeviceTest;

TEST_P(MiniBatchTest, BlockDstRowsKeepsTheFirstRowsAndPadsTheGradient) {
  Block block;
  block.num_src = 5;
  block.num_dst = 2;
  std::vector<float> h(15);
  std::iota(h.begin(), h.end(), 0.0f);
  Variable x(Tensor::from_host(h, 5, 3, device()), /*requires_grad=*/true);
  Variable y = block_dst_rows(x, block);
  ASSERT_EQ(y.rows(), 2);
  EXPECT_EQ(y.value().to_host_vector(), std::vector<float>(h.begin(), h.begin() + 6));
  y.backward(Tensor::full(2, 3, 2.0f, device()));
  std::vector<float> expected(15, 0.0f);
  std::fill(expected.begin(), expected.begin() + 6, 2.0f);
  EXPECT_EQ(x.grad().to_host_vector(), expected);
  block.num_src = 4;
  EXPECT_THROW(block_dst_rows(x, block), std::invalid_argument);
}

TEST_P(MiniBatchTest, FeatureGathererTakesTheRowsInOrder) {
  for (FeatureFormat format : {FeatureFormat::Dense, FeatureFormat::Sparse}) {
    const TrainData data = small_task(device(), format);
    const TrainData dense = small_task(Device::cpu(), FeatureFormat::Dense);
    const std::vector<float> all = dense.features.dense.to_host_vector();
    const int64_t F = dense.features.cols();
    FeatureGatherer gatherer(data.features);
    const std::vector<int64_t> ids = {599, 0, 17, 17, 300};
    const NodeFeatures got = gatherer.gather(IndexTensor::vector(ids, device()));
    ASSERT_EQ(got.is_sparse(), format == FeatureFormat::Sparse);
    ASSERT_EQ(got.rows(), 5);
    EXPECT_EQ(got.device(), device());
    const std::vector<float> rows =
        got.is_sparse() ? got.sparse.to(Device::cpu()).to_csr().to_dense() : got.dense.to_host_vector();
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_TRUE(std::equal(rows.begin() + i * F, rows.begin() + (i + 1) * F, all.begin() + ids[i] * F))
          << "row " << i;
    }
    EXPECT_THROW(gatherer.gather(IndexTensor::vector({600}, device())), std::invalid_argument);
  }
}

TEST_P(MiniBatchTest, WeightedCrossEntropyWithEqualWeightsIsTheMeanLoss) {
  auto rng = rng_for(30);
  const std::vector<float> h = random_values<float>(rng, 6 * 4, -2, 2);
  const std::vector<int64_t> labels = {0, 3, 1, 1, 2, 0};
  Variable a(Tensor::from_host(h, 6, 4, device()), true), b(Tensor::from_host(h, 6, 4, device()), true);
  std::vector<float> per_row;
  Variable weighted = weighted_cross_entropy(a, labels, std::vector<float>(6, 1.0f / 6), &per_row);
  std::vector<int64_t> rows(6);
  std::iota(rows.begin(), rows.end(), int64_t{0});
  Variable mean = cross_entropy(b, IndexTensor::vector(labels, device()), IndexTensor::vector(rows, device()));
  EXPECT_NEAR(weighted.value().to_host_vector()[0], mean.value().to_host_vector()[0], 1e-6);
  EXPECT_NEAR(std::accumulate(per_row.begin(), per_row.end(), 0.0) / 6, mean.value().to_host_vector()[0], 1e-6);
  weighted.backward();
  mean.backward();
  EXPECT_TRUE(close_to(a.grad().to_host_vector(), b.grad().to_host_vector(), {}, 1e-5, 1e-7));
  EXPECT_THROW(weighted_cross_entropy(a, {0, 4, 1, 1, 2, 0}, std::vector<float>(6, 1.0f)), std::invalid_argument);
  EXPECT_THROW(weighted_cross_entropy(a, labels, std::vector<float>(5, 1.0f)), std::invalid_argument);
}

TEST_P(MiniBatchTest, FullNeighbourhoodBlocksGiveTheFullGraphOutputs) {
  const TrainData data = small_task(device());
  for (SageAggregator aggregator : {SageAggregator::Mean, SageAggregator::MaxPool}) {
    ModelConfig c;
    c.in_features = data.features.cols();
    c.hidden_features = 8;
    c.out_features = data.num_classes;
    c.layers = 2;
    c.sage_aggregator = aggregator;
    Generator gen(4);
    MiniBatchSAGE model(c, gen, device());
    model.eval();
    NoGradGuard no_grad;
    const std::vector<float> full = model.forward(data.graph, data.features, gen).value().to_host_vector();
    NeighborSampler sampler(data.graph, {-1, -1});
    FeatureGatherer gatherer(data.features);
    const std::vector<int64_t> seeds = {5, 599, 0, 123, 77};
    const MiniBatch mb = sampler.sample(seeds, gen);
    const std::vector<float> got =
        model.forward(mb, gatherer.gather(mb.input_nodes), gen).value().to_host_vector();
    const int64_t K = data.num_classes;
    ASSERT_EQ(static_cast<int64_t>(got.size()), 5 * K);
    std::vector<float> expected;
    for (int64_t v : seeds) expected.insert(expected.end(), full.begin() + v * K, full.begin() + (v + 1) * K);
    EXPECT_TRUE(close_to(got, expected, {}, 1e-4, 1e-5));
  }
}

// The same for hop-wise samples (HopSampler, PyG's layout) turned into blocks.
TEST_P(MiniBatchTest, FullHopwiseSamplesAsBlocksGiveTheFullGraphOutputs) {
  const TrainData data = small_task(device());
  ModelConfig c;
  c.in_features = data.features.cols();
  c.hidden_features = 8;
  c.out_features = data.num_classes;
  c.layers = 3;
  Generator gen(4);
  MiniBatchSAGE model(c, gen, device());
  model.eval();
  NoGradGuard no_grad;
  const std::vector<float> full = model.forward(data.graph, data.features, gen).value().to_host_vector();
  const Graph host = data.graph.to(Device::cpu());
  CscGraph csc;
  csc.colptr = host.offsets().to_host_vector();
  const std::vector<int32_t> sources = host.sources().to_host_vector();
  csc.row.assign(sources.begin(), sources.end());
  HopSamplerOptions o;
  o.num_neighbors = {-1, -1, -1};
  HopSampler sampler(csc.view(), o);
  HopSamplerScratch scratch;
  const std::vector<int64_t> seeds = {5, 599, 0, 123, 77};
  const MiniBatch mb = to_minibatch(sampler.sample(seeds, {}, 0, 0, scratch), device());
  ASSERT_EQ(mb.num_layers(), 3);
  for (int64_t l = 0; l + 1 < 3; ++l) EXPECT_EQ(mb.blocks[l].num_dst, mb.blocks[l + 1].num_src);
  FeatureGatherer gatherer(data.features);
  const std::vector<float> got = model.forward(mb, gatherer.gather(mb.input_nodes), gen).value().to_host_vector();
  const int64_t K = data.num_classes;
  ASSERT_EQ(static_cast<int64_t>(got.size()), 5 * K);
  std::vector<float> expected;
  for (int64_t v : seeds) expected.insert(expected.end(), full.begin() + v * K, full.begin() + (v + 1) * K);
  EXPECT_TRUE(close_to(got, expected, {}, 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(Devices, MiniBatchTest, testing::ValuesIn(all_devices()), device_name);

MiniBatchTrainResult train(const TrainData& data, SeedOrder order, uint64_t seed, int64_t epochs = 8,
                           ModelSelection selection = ModelSelection::BestValidation, float lr = 0.01f,
                           NonFiniteLoss nonfinite = NonFiniteLoss::Error, int pipeline_threads = 0) {
  ModelConfig c;
  c.in_features = data.features.cols();
  c.hidden_features = 16;
  c.out_features = data.num_classes;
  c.layers = 2;
  Generator gen(seed);
  MiniBatchSAGE model(c, gen, data.graph.device());
  MiniBatchTrainerOptions o;
  o.fanouts = {5, 10};
  o.batch_size = 32;
  o.epochs = epochs;
  o.seed = seed;
  o.log_every = 0;
  o.eval_every = 4;
  o.seed_order = order;
  o.selection = selection;
  o.lr = lr;
  o.nonfinite_loss = nonfinite;
  o.pipeline_threads = pipeline_threads;
  MiniBatchTrainer trainer(model, data, o);
  return trainer.fit();
}

TEST(MiniBatchTrainer, LearnsTheSyntheticGraphReproducibly) {
  const TrainData data = small_task(Device::cpu());
  const double chance = 1.0 / static_cast<double>(data.num_classes);
  SerialOpenMP serial;
  for (SeedOrder order : {SeedOrder::Shuffle, SeedOrder::LossPrioritized}) {
    const MiniBatchTrainResult a = train(data, order, 1);
    EXPECT_GT(a.test_acc, chance + 0.3) << "seed order " << static_cast<int>(order);
    EXPECT_LT(a.history.back().loss, a.history.front().loss);
    EXPECT_EQ(a.batches_per_epoch, (static_cast<int64_t>(data.train_idx.numel()) + 31) / 32);
    EXPECT_GT(a.batches_per_second, 0.0);
    if (order == SeedOrder::Shuffle) {
      const MiniBatchTrainResult b = train(data, order, 1, 3);
      for (size_t i = 0; i < b.history.size(); ++i) {
        EXPECT_EQ(a.history[i].loss, b.history[i].loss) << "epoch " << i + 1;
      }
    }
  }
}

TEST(MiniBatchTrainer, TrainsOnThePipelineReproduciblyAtAnyThreadCount) {
  SerialOpenMP serial;
  for (FeatureFormat features : {FeatureFormat::Dense, FeatureFormat::Sparse}) {  // gathered by the pipeline / here
    const TrainData data = small_task(Device::cpu(), features);
    const double chance = 1.0 / static_cast<double>(data.num_classes);
    const MiniBatchTrainResult one =
        train(data, SeedOrder::Shuffle, 3, 8, ModelSelection::BestValidation, 0.01f, NonFiniteLoss::Error, 1);
    const MiniBatchTrainResult two =
        train(data, SeedOrder::Shuffle, 3, 8, ModelSelection::BestValidation, 0.01f, NonFiniteLoss::Error, 2);
    EXPECT_GT(one.test_acc, chance + 0.3);
    EXPECT_LT(one.history.back().loss, one.history.front().loss);
    ASSERT_EQ(one.history.size(), two.history.size());
    for (size_t i = 0; i < one.history.size(); ++i) EXPECT_EQ(one.history[i].loss, two.history[i].loss) << i;
    EXPECT_EQ(one.test_acc, two.test_acc);
  }
  const TrainData data = small_task(Device::cpu());
  EXPECT_THROW(train(data, SeedOrder::LossPrioritized, 3, 1, ModelSelection::BestValidation, 0.01f,
                     NonFiniteLoss::Error, 1),
               std::invalid_argument);
}

// Evaluations happen at epochs 4, 8 and 10 (eval_every 4, and the last): LastEpoch
// reports epoch 10's metrics, BestValidation the best of the three.
TEST(MiniBatchTrainer, ReportsTheSelectedEvaluatedEpoch) {
  const TrainData data = small_task(Device::cpu());
  SerialOpenMP serial;
  const MiniBatchTrainResult last = train(data, SeedOrder::Shuffle, 2, 10, ModelSelection::LastEpoch);
  EXPECT_EQ(last.best_epoch, 10);
  EXPECT_EQ(last.test_acc, last.history.back().metric("test_acc"));
  const MiniBatchTrainResult best = train(data, SeedOrder::Shuffle, 2, 10, ModelSelection::BestValidation);
  double top = 0;
  for (int64_t e : {4, 8, 10}) top = std::max(top, best.history[static_cast<size_t>(e - 1)].metric("valid_acc"));
  EXPECT_EQ(best.best_valid_acc, top);
  EXPECT_EQ(best.test_acc, best.history[static_cast<size_t>(best.best_epoch - 1)].metric("test_acc"));
}

// lr 1e30: the first Adam step blows the weights up, so a later batch's loss is not finite.
TEST(MiniBatchTrainer, NonFiniteLossStopsTrainingNamingEpochAndBatch) {
  const TrainData data = small_task(Device::cpu());
  SerialOpenMP serial;
  try {
    (void)train(data, SeedOrder::Shuffle, 1, 3, ModelSelection::BestValidation, 1e30f);
    ADD_FAILURE() << "a diverged run finished without an error";
  } catch (const NonFiniteLossError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("MiniBatchTrainer: the training loss is"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at epoch " + std::to_string(e.epoch()) + ", batch "), std::string::npos) << msg;
  }
  for (SeedOrder order : {SeedOrder::Shuffle, SeedOrder::LossPrioritized}) {
    testing::internal::CaptureStderr();
    const MiniBatchTrainResult r = train(data, order, 1, 3, ModelSelection::BestValidation, 1e30f, NonFiniteLoss::Warn);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("warning"), std::string::npos);
    EXPECT_EQ(r.history.size(), 3u) << "seed order " << static_cast<int>(order);
  }
}

TEST(MiniBatchTrainer, RejectsFanoutsThatDoNotMatchTheModel) {
  const TrainData data = small_task(Device::cpu());
  ModelConfig c;
  c.in_features = data.features.cols();
  c.out_features = data.num_classes;
  c.layers = 3;
  Generator gen(0);
  MiniBatchSAGE model(c, gen);
  MiniBatchTrainerOptions o;
  o.fanouts = {5, 5};
  EXPECT_THROW(MiniBatchTrainer(model, data, o), std::invalid_argument);
  o.fanouts = {5, 5, 5};
  o.batch_size = 0;
  EXPECT_THROW(MiniBatchTrainer(model, data, o), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
