// Distributed full-batch training under mpirun: the halo exchange moves what the
// partition says, keyed dropout is the single-process mask, and GCN, GraphSAGE and
// GIN trained over the ranks equal the single-process run (loss at every epoch to
// 1e-5 relative, the same selected epoch and accuracies). Every rank also runs the
// single-process reference itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/dist/trainer.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"
#include "edgewise/gnn/data/synthetic.hpp"

namespace {

using namespace edgewise::gnn;
using namespace edgewise::gnn::dist;
using edgewise::Device;

const Communicator& comm() {
  static const Communicator world = Communicator::world();
  return world;
}

Dataset synthetic(FeatureFormat format, int64_t nodes = 600) {
  PlantedPartitionParams params;
  params.num_nodes = nodes;
  params.num_classes = 4;
  params.num_features = 64;
  params.feature_density = 0.08;
  params.train_per_class = 15;
  params.num_valid = 100;
  params.num_test = 200;
  params.features = format;
  return planted_partition(params, 11);
}

Partition partition_for_ranks(const Dataset& d) {
  PartitionOptions o;
  o.seed = 3;
  return partition(d, comm().size(), o);
}

TEST(HaloExchange, MovesTheRowsThePartitionNames) {
  const Dataset d = synthetic(FeatureFormat::Sparse);
  const Partition p = partition_for_ranks(d);
  const Part part = build_part(d, p, comm().rank());
  const HaloExchange halo(comm(), part);
  // Forward: owned rows carry (global id, 2 * global id); the halo must arrive with its own.
  std::vector<float> owned;
  for (int64_t i = 0; i < part.num_owned; ++i)
    for (float m : {1.0f, 2.0f}) owned.push_back(m * static_cast<float>(part.global_ids[static_cast<size_t>(i)]));
  const std::vector<float> local = halo.forward(Tensor::from_host(owned, part.num_owned, 2)).to_host_vector();
  for (int64_t i = 0; i < part.num_local(); ++i) {
    ASSERT_EQ(local[static_cast<size_t>(2 * i)], static_cast<float>(part.global_ids[static_cast<size_t>(i)])) << i;
    ASSERT_EQ(local[static_cast<size_t>(2 * i + 1)], 2.0f * static_cast<float>(part.global_ids[static_cast<size_t>(i)]));
  }
  // Backward: a gradient of 1 on every local row; owned node u gets 1 plus one per
  // other part that holds u in its halo (counted naively from all the parts).
  std::vector<int64_t> halo_copies(static_cast<size_t>(d.num_nodes), 0);
  for (int64_t r = 0; r < comm().size(); ++r) {
    const Part other = build_part(d, p, r);
    for (int64_t i = other.num_owned; i < other.num_local(); ++i) ++halo_copies[static_cast<size_t>(other.global_ids[static_cast<size_t>(i)])];
  }
  const std::vector<float> g = halo.backward(Tensor::full(part.num_local(), 1, 1.0f)).to_host_vector();
  for (int64_t i = 0; i < part.num_owned; ++i)
    EXPECT_EQ(g[static_cast<size_t>(i)], 1.0f + static_cast<float>(halo_copies[static_cast<size_t>(part.global_ids[static_cast<size_t>(i)])]))
        << "global node " << part.global_ids[static_cast<size_t>(i)];
}

TEST(KeyedDropout, IsTheSingleProcessMaskOnTheseRows) {
  const int64_t n = 50, c = 7;
  std::vector<float> x(static_cast<size_t>(n * c));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0f + static_cast<float>(i);
  Generator full_gen(9), part_gen(9);
  const std::vector<float> full =
      dropout(Variable(Tensor::from_host(x, n, c)), 0.5f, true, full_gen).value().to_host_vector();
  const std::vector<int64_t> rows{3, 17, 18, 49, 0};
  std::vector<float> sub;
  std::vector<int64_t> key_list;
  for (int64_t r : rows) {
    sub.insert(sub.end(), x.begin() + r * c, x.begin() + (r + 1) * c);
    key_list.push_back(r * c);
  }
  const IndexTensor keys = IndexTensor::vector(key_list);
  const std::vector<float> got =
      keyed_dropout(Variable(Tensor::from_host(sub, static_cast<int64_t>(rows.size()), c)), 0.5f, true, part_gen, keys)
          .value()
          .to_host_vector();
  int dropped = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t j = 0; j < c; ++j) {
      EXPECT_EQ(got[i * static_cast<size_t>(c) + static_cast<size_t>(j)], full[static_cast<size_t>(rows[i] * c + j)]);
      dropped += got[i * static_cast<size_t>(c) + static_cast<size_t>(j)] == 0.0f;
    }
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(full_gen.state(), part_gen.state());
}

// One key per element (sparse values), in runs of consecutive keys that cross the
// kernel's chunks: the mask of the full vector at those positions.
TEST(KeyedDropout, RunsOfValueKeysAreTheFullVectorsMask) {
  const int64_t n = 20000;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = 0.5f + static_cast<float>(i % 97);
  Generator full_gen(4), part_gen(4);
  const std::vector<float> full =
      dropout(Variable(Tensor::from_host(x, n, 1)), 0.3f, true, full_gen).value().to_host_vector();
  std::vector<int64_t> keys;
  for (int64_t start : {19990, 3, 7000, 4090, 12345})
    for (int64_t k = start; k < std::min(n, start + 3001); ++k) keys.push_back(k);
  std::vector<float> sub;
  for (int64_t k : keys) sub.push_back(x[static_cast<size_t>(k)]);
  const std::vector<float> got = keyed_dropout(Variable(Tensor::from_host(sub, static_cast<int64_t>(sub.size()), 1)),
                                               0.3f, true, part_gen, IndexTensor::vector(keys))
                                     .value()
                                     .to_host_vector();
  for (size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(got[i], full[static_cast<size_t>(keys[i])]) << "key " << keys[i];
}

struct Case {
  ModelKind kind;
  int64_t epochs;
};

// Single-process Trainer and fit_distributed on the same dataset, config and seed.
void expect_equal_runs(const Dataset& d, FeatureFormat format, const Case& c) {
  SCOPED_TRACE(std::string(to_string(c.kind)) + " on " + d.name + " with " + std::to_string(comm().size()) + " ranks");
  PrepareOptions prep;
  prep.features = format;
  const TrainData full = prepare(d, Device::cpu(), prep);
  ModelConfig config;
  config.kind = c.kind;
  config.in_features = full.features.cols();
  config.out_features = d.num_classes;
  TrainerOptions options;
  options.epochs = c.epochs;
  options.seed = 5;
  options.log_every = 0;

  Generator init(options.seed);
  auto single_model = make_model(config, init, Device::cpu());
  const TrainResult single = Trainer(*single_model, full, options).fit();

  DistTrainData data = prepare_part(comm(), build_part(d, partition_for_ranks(d), comm().rank()), prep);
  const HaloExchange halo(comm(), data.part);
  Generator dist_init(options.seed);
  auto dist_model = make_dist_model(config, dist_init, data, halo);
  const DistTrainResult dist = fit_distributed(comm(), *dist_model, data, options);

  ASSERT_EQ(dist.result.history.size(), single.history.size());
  for (size_t e = 0; e < single.history.size(); ++e) {
    const double a = single.history[e].loss, b = dist.result.history[e].loss;
    EXPECT_LE(std::abs(a - b), 1e-5 * std::abs(a)) << "epoch " << e + 1 << ": single " << a << ", distributed " << b;
  }
  EXPECT_EQ(dist.result.best_epoch, single.best_epoch);
  EXPECT_EQ(dist.result.test_acc, single.test_acc);
  EXPECT_EQ(dist.result.best_valid_acc, single.best_valid_acc);
  EXPECT_EQ(dist.result.train_acc, single.train_acc);
  if (comm().size() > 1) {
    EXPECT_GT(dist.halo_bytes_per_epoch, 0);
  }
}

TEST(DistributedTraining, EqualsSingleProcessOnSyntheticSparseFeatures) {
  const Dataset d = synthetic(FeatureFormat::Sparse);
  for (Case c : {Case{ModelKind::GCN, 40}, Case{ModelKind::GraphSAGE, 40}, Case{ModelKind::GIN, 40}})
    expect_equal_runs(d, FeatureFormat::Sparse, c);
}

TEST(DistributedTraining, EqualsSingleProcessOnSyntheticDenseFeatures) {
  const Dataset d = synthetic(FeatureFormat::Dense);
  for (Case c : {Case{ModelKind::GCN, 20}, Case{ModelKind::GraphSAGE, 20}, Case{ModelKind::GIN, 20}})
    expect_equal_runs(d, FeatureFormat::Dense, c);
}

TEST(DistributedTraining, EqualsSingleProcessOnCora) {
  const std::filesystem::path cora = default_data_dir() / "cora.npz";
  if (default_data_dir().empty() || !std::filesystem::exists(cora)) {
    GTEST_SKIP() << "no cora.npz in $EDGEWISE_DATA_DIR: the Cora comparison did not run";
  }
  const Dataset d = load_dataset(cora.string());
  for (Case c : {Case{ModelKind::GCN, 30}, Case{ModelKind::GraphSAGE, 10}, Case{ModelKind::GIN, 10}})
    expect_equal_runs(d, FeatureFormat::Auto, c);
}

// With whole neighbourhoods (fanout -1) and no dropout a minibatch's gradient does not
// depend on how its seeds are split, so data parallelism equals the single process.
TEST(MiniBatchDataParallel, EqualsSingleProcessWithWholeNeighbourhoods) {
  const Dataset d = synthetic(FeatureFormat::Dense, 300);
  PrepareOptions prep;
  prep.features = FeatureFormat::Dense;
  const TrainData full = prepare(d, Device::cpu(), prep);
  ModelConfig config;
  config.kind = ModelKind::GraphSAGE;
  config.in_features = full.features.cols();
  config.out_features = d.num_classes;
  config.dropout = 0.0f;
  for (int64_t batch_size : {16, 2}) {  // 2: some ranks get no seeds of a batch
    SCOPED_TRACE("batch size " + std::to_string(batch_size) + ", " + std::to_string(comm().size()) + " ranks");
    MiniBatchTrainerOptions o;
    o.fanouts = {-1, -1};
    o.batch_size = batch_size;
    o.epochs = batch_size == 2 ? 1 : 4;
    o.log_every = 0;
    o.seed = 2;
    Generator g1(o.seed), g2(o.seed);
    MiniBatchSAGE single_model(config, g1), dp_model(config, g2);
    const MiniBatchTrainResult single = MiniBatchTrainer(single_model, full, o).fit();
    o.data_parallel = data_parallel(comm());
    const MiniBatchTrainResult dp = MiniBatchTrainer(dp_model, full, o).fit();
    ASSERT_EQ(dp.history.size(), single.history.size());
    for (size_t e = 0; e < single.history.size(); ++e) {
      const double a = single.history[e].loss, b = dp.history[e].loss;
      EXPECT_LE(std::abs(a - b), 1e-5 * std::abs(a)) << "epoch " << e + 1 << ": single " << a << ", data parallel " << b;
    }
    EXPECT_EQ(dp.test_acc, single.test_acc);
    EXPECT_EQ(dp.best_valid_acc, single.best_valid_acc);
  }
}

}  // namespace

// MPI around gtest: every rank runs every test (they are collective); rank 0 prints;
// the exit status is nonzero when any rank failed.
int main(int argc, char** argv) {
  Environment mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (comm().rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  std::vector<int64_t> failed{RUN_ALL_TESTS() != 0 ? 1 : 0};
  comm().allreduce_sum(failed);
  if (failed[0] > 0 && comm().rank() == 0) std::fprintf(stderr, "%lld rank(s) failed\n", static_cast<long long>(failed[0]));
  return failed[0] > 0 ? 1 : 0;
}
