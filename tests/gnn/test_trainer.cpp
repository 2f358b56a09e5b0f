// End to end on the synthetic graph: GCN / GraphSAGE / GIN learn it, a seed gives the
// same result twice, the metrics files and the plot are written; the real datasets'
// accuracy floors are checked by the benchmark script, not here (minutes, not seconds).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "edgewise/gnn/synthetic.hpp"
#include "edgewise/gnn/trainer.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

TrainData small_task(Device device) {
  PlantedPartitionParams p;
  p.num_nodes = 600;
  p.num_valid = 100;
  p.num_test = 300;
  return prepare(planted_partition(p, 3), device);
}

TrainResult train(ModelKind kind, const TrainData& data, uint64_t seed, Device device, int64_t epochs = 60,
                  TrainerOptions extra = {}) {
  ModelConfig c;
  c.kind = kind;
  c.in_features = data.features.cols();
  c.out_features = data.num_classes;
  c.hidden_features = 16;
  Generator gen(seed);
  auto model = make_model(c, gen, device);
  extra.epochs = epochs;
  extra.seed = seed;
  extra.log_every = 0;
  Trainer trainer(*model, data, extra);
  return trainer.fit();
}

using TrainerTest = DeviceTest;

TEST_P(TrainerTest, EveryModelLearnsTheSyntheticGraph) {
  const TrainData data = small_task(device());
  const double chance = 1.0 / static_cast<double>(data.num_classes);
  for (ModelKind kind : {ModelKind::GCN, ModelKind::GraphSAGE, ModelKind::GIN}) {
    TrainResult r = train(kind, data, 1, device());
    EXPECT_GT(r.test_acc, chance + 0.3) << to_string(kind) << " test accuracy " << r.test_acc;
    EXPECT_LT(r.history.back().loss, r.history.front().loss) << to_string(kind);
  }
}

TEST_P(TrainerTest, TheSameSeedGivesTheSameRun) {
  const TrainData data = small_task(device());
  TrainResult a = train(ModelKind::GCN, data, 5, device(), 20);
  TrainResult b = train(ModelKind::GCN, data, 5, device(), 20);
  ASSERT_EQ(a.history.size(), b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i) {
    EXPECT_EQ(a.history[i].loss, b.history[i].loss) << "epoch " << i + 1;
    EXPECT_EQ(a.history[i].valid_acc, b.history[i].valid_acc);
  }
  TrainResult c = train(ModelKind::GCN, data, 6, device(), 20);
  EXPECT_NE(a.history.back().loss, c.history.back().loss) << "another seed, another run";
}

INSTANTIATE_TEST_SUITE_P(Devices, TrainerTest, testing::ValuesIn(all_devices()), device_name);

TEST(Trainer, WritesMetricsAndPlotAndStopsEarly) {
  const TrainData data = small_task(Device::cpu());
  const auto dir = std::filesystem::temp_directory_path() / "edgewise_trainer_test";
  std::filesystem::create_directories(dir);
  TrainerOptions o;
  o.metrics_csv = (dir / "m.csv").string();
  o.metrics_json = (dir / "m.json").string();
  o.plot_svg = (dir / "curves.svg").string();
  o.patience = 5;
  o.lr = 0.0f;  // nothing improves: stops after `patience` epochs
  TrainResult r = train(ModelKind::GCN, data, 2, Device::cpu(), 100, o);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.history.size(), 6u);
  std::ifstream csv(o.metrics_csv);
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "epoch,loss,train_acc,valid_acc,valid_loss,test_acc,epoch_ms");
  std::ifstream svg(o.plot_svg);
  std::string all((std::istreambuf_iterator<char>(svg)), {});
  EXPECT_NE(all.find("<polyline"), std::string::npos);
  std::ifstream json(o.metrics_json);
  std::string j((std::istreambuf_iterator<char>(json)), {});
  EXPECT_NE(j.find("\"best_epoch\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Trainer, LastEpochSelectionReportsTheFinalModel) {
  const TrainData data = small_task(Device::cpu());
  TrainerOptions o;
  o.selection = ModelSelection::LastEpoch;
  TrainResult last = train(ModelKind::GCN, data, 2, Device::cpu(), 30, o);
  ASSERT_EQ(last.history.size(), 30u);
  EXPECT_EQ(last.best_epoch, 30);
  EXPECT_EQ(last.test_acc, last.history.back().test_acc);
  EXPECT_EQ(last.best_valid_acc, last.history.back().valid_acc);
  o.selection = ModelSelection::BestValidation;
  TrainResult best = train(ModelKind::GCN, data, 2, Device::cpu(), 30, o);
  double top = 0;
  for (const EpochRecord& r : best.history) top = std::max(top, r.valid_acc);
  EXPECT_EQ(best.best_valid_acc, top);
  EXPECT_EQ(best.test_acc, best.history[static_cast<size_t>(best.best_epoch - 1)].test_acc);
}

}  // namespace
}  // namespace edgewise::test
