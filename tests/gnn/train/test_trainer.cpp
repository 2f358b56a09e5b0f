// End to end on the synthetic graph: GCN / GraphSAGE / GIN learn it, a seed gives the
// same result twice, the metrics files and the plot are written; the real datasets'
// accuracy floors are checked by the benchmark script, not here (minutes, not seconds).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "npz_writer.hpp"
#include "gnn_test_data.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

TrainData small_task(Device device) { return planted_task(device, 600, 100, 300); }

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
    EXPECT_EQ(a.history[i].metric("valid_acc"), b.history[i].metric("valid_acc"));
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
  EXPECT_EQ(header, "epoch,loss,train_acc,valid_acc,valid_loss,test_acc,lr,epoch_ms");
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
  EXPECT_EQ(last.test_acc, last.history.back().metric("test_acc"));
  EXPECT_EQ(last.best_valid_acc, last.history.back().metric("valid_acc"));
  o.selection = ModelSelection::BestValidation;
  TrainResult best = train(ModelKind::GCN, data, 2, Device::cpu(), 30, o);
  double top = 0;
  for (const EpochRecord& r : best.history) top = std::max(top, r.metric("valid_acc"));
  EXPECT_EQ(best.best_valid_acc, top);
  EXPECT_EQ(best.test_acc, best.history[static_cast<size_t>(best.best_epoch - 1)].metric("test_acc"));
}

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

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// A learning rate of 1e30 makes Adam's first step blow the weights up, so the
// second epoch's loss is not finite.
TEST(Trainer, NonFiniteLossStopsTrainingNamingTheEpoch) {
  const TrainData data = small_task(Device::cpu());
  TrainerOptions o;
  o.lr = 1e30f;
  try {
    (void)train(ModelKind::GCN, data, 2, Device::cpu(), 5, o);
    ADD_FAILURE() << "a diverged run finished without an error";
  } catch (const NonFiniteLossError& e) {
    EXPECT_GE(e.epoch(), 2);
    EXPECT_FALSE(std::isfinite(e.loss()));
    EXPECT_NE(std::string(e.what()).find("at epoch " + std::to_string(e.epoch())), std::string::npos) << e.what();
  }
}

TEST(Trainer, NonFiniteLossWarnGoesOnToTheLastEpoch) {
  const TrainData data = small_task(Device::cpu());
  TrainerOptions o;
  o.lr = 1e30f;
  o.nonfinite_loss = NonFiniteLoss::Warn;
  testing::internal::CaptureStderr();
  const TrainResult r = train(ModelKind::GCN, data, 2, Device::cpu(), 5, o);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.history.size(), 5u);
  EXPECT_FALSE(std::isfinite(r.history.back().loss));
  EXPECT_NE(err.find("warning: the training loss is"), std::string::npos) << err;
  EXPECT_EQ(parse_nonfinite_loss("warn"), NonFiniteLoss::Warn);
  EXPECT_EQ(parse_nonfinite_loss("error"), NonFiniteLoss::Error);
  EXPECT_THROW(parse_nonfinite_loss("ignore"), std::invalid_argument);
}

TEST(Trainer, AnUnwritableOutputFailsBeforeTheFirstEpoch) {
  const TrainData data = small_task(Device::cpu());
  for (int which = 0; which < 3; ++which) {
    TrainerOptions o;
    const std::string bad = "/nonexistent_edgewise_dir/out" + std::to_string(which);
    (which == 0 ? o.metrics_csv : which == 1 ? o.metrics_json : o.plot_svg) = bad;
    ModelConfig c;
    c.in_features = data.features.cols();
    c.out_features = data.num_classes;
    Generator gen(0);
    auto model = make_model(c, gen, Device::cpu());
    o.log_every = 1;
    Trainer trainer(*model, data, o);
    testing::internal::CaptureStdout();
    expect_error<std::invalid_argument>([&] { (void)trainer.fit(); }, {"cannot write '" + bad + "'"});
    EXPECT_EQ(testing::internal::GetCapturedStdout(), "") << "no epoch may run before the check";
  }
}

TEST(Trainer, AnEmptyValidationSplitIsAnErrorUnlessNothingNeedsIt) {
  TrainData data = small_task(Device::cpu());
  data.valid_idx = IndexTensor::vector(std::vector<int64_t>{}, Device::cpu());
  ModelConfig c;
  c.in_features = data.features.cols();
  c.out_features = data.num_classes;
  Generator gen(0);
  auto model = make_model(c, gen, Device::cpu());
  expect_error<std::invalid_argument>([&] { Trainer t(*model, data, TrainerOptions{}); }, {"valid_idx", "is empty"});
  TrainerOptions last;
  last.selection = ModelSelection::LastEpoch;
  EXPECT_NO_THROW({ Trainer t(*model, data, last); });
  last.patience = 3;
  EXPECT_THROW({ Trainer t(*model, data, last); }, std::invalid_argument);
}

TEST(MetricsFiles, CheckWritableFileNeverChangesOrLeavesFiles) {
  TempDir dir;
  const auto existing = dir.file("kept.json");
  write_file(existing, Bytes{'a', 'b', 'c'});
  EXPECT_NO_THROW(check_writable_file(existing.string()));
  EXPECT_EQ(read_all(existing), "abc");
  const auto fresh = dir.file("fresh.json");
  EXPECT_NO_THROW(check_writable_file(fresh.string()));
  EXPECT_FALSE(std::filesystem::exists(fresh)) << "the probe file must be removed";
  expect_error<std::invalid_argument>([&] { check_writable_file(dir.path().string()); }, {"is a directory"});
  expect_error<std::invalid_argument>([&] { check_writable_file((dir.path() / "no" / "x.csv").string()); },
                                      {"cannot write '", "x.csv'"});
}

TEST(MetricsFiles, JsonWritesNonFiniteValuesAsNull) {
  TempDir dir;
  TrainResult r;
  r.best_epoch = 1;
  r.test_acc = 0.5;
  r.best.set("test_acc", 0.5);
  EpochRecord a, b;
  a.epoch = 1;
  a.loss = std::numeric_limits<double>::quiet_NaN();
  a.evaluated = true;
  a.metrics.set("valid_loss", std::numeric_limits<double>::infinity());
  b.epoch = 2;
  b.loss = 0.25;
  r.history = {a, b};
  const auto path = dir.file("m.json");
  write_metrics_json(path.string(), r);
  const nlohmann::json j = nlohmann::json::parse(read_all(path));  // throws on "nan" / "inf"
  EXPECT_TRUE(j["history"][0]["loss"].is_null());
  EXPECT_TRUE(j["history"][0]["valid_loss"].is_null());
  EXPECT_EQ(j["history"][1]["loss"].get<double>(), 0.25);
  EXPECT_EQ(j["test_acc"].get<double>(), 0.5);
  EXPECT_EQ(j["stopped_early"].get<bool>(), false);
}

TEST(MetricsFiles, SvgEscapesTheTitleAndSkipsNonFinitePoints) {
  TempDir dir;
  std::vector<EpochRecord> history(3);
  for (int i = 0; i < 3; ++i) {
    history[static_cast<size_t>(i)].epoch = i + 1;
    history[static_cast<size_t>(i)].loss = 1.0 / (i + 1);
  }
  history[1].loss = std::numeric_limits<double>::quiet_NaN();
  const auto path = dir.file("c.svg");
  write_training_curves_svg(path.string(), history, "we\"ird <R&D> it's");
  const std::string svg = read_all(path);
  EXPECT_NE(svg.find("we&quot;ird &lt;R&amp;D&gt; it&apos;s"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<R&D>"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace edgewise::test
