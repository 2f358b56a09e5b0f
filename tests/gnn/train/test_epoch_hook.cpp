// TrainerOptions::on_epoch (sees every record, stops the loop by returning false,
// its exceptions propagate) and NodeClassifier::embed (the hidden layer's output).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

TrainData tiny_task() {
  PlantedPartitionParams p;
  p.num_nodes = 200;
  p.num_features = 50;
  p.feature_density = 0.1;
  p.train_per_class = 5;
  p.num_valid = 40;
  p.num_test = 80;
  return prepare(planted_partition(p, 7), Device::cpu());
}

std::unique_ptr<NodeClassifier> tiny_model(const TrainData& data, ModelKind kind, int64_t layers = 2) {
  ModelConfig c;
  c.kind = kind;
  c.in_features = data.features.cols();
  c.out_features = data.num_classes;
  c.hidden_features = 8;
  c.layers = layers;
  Generator gen(1);
  return make_model(c, gen);
}

TEST(EpochHook, SeesEveryRecordAndStopsWhenItReturnsFalse) {
  const TrainData data = tiny_task();
  auto model = tiny_model(data, ModelKind::GCN);
  std::vector<int64_t> seen;
  TrainerOptions o;
  o.epochs = 50;
  o.log_every = 0;
  o.on_epoch = [&](const EpochRecord& rec) {
    seen.push_back(rec.epoch);
    return rec.epoch < 4;
  };
  const TrainResult r = Trainer(*model, data, o).fit();
  EXPECT_EQ(seen, (std::vector<int64_t>{1, 2, 3, 4}));
  ASSERT_EQ(r.history.size(), 4u);
  EXPECT_TRUE(r.stopped_early);
}

TEST(EpochHook, ExceptionsPropagate) {
  const TrainData data = tiny_task();
  auto model = tiny_model(data, ModelKind::GCN);
  TrainerOptions o;
  o.epochs = 5;
  o.log_every = 0;
  o.on_epoch = [](const EpochRecord&) -> bool { throw std::runtime_error("stop here"); };
  EXPECT_THROW(Trainer(*model, data, o).fit(), std::runtime_error);
}

TEST(Embed, IsTheHiddenLayersOutputForEveryModel) {
  const TrainData data = tiny_task();
  for (ModelKind kind : {ModelKind::GCN, ModelKind::GraphSAGE, ModelKind::GIN}) {
    auto model = tiny_model(data, kind, 3);
    model->eval();
    NoGradGuard no_grad;
    Generator gen(0);
    const Tensor h = model->embed(data.graph, data.features, gen).value();
    ASSERT_EQ(h.rows(), data.features.rows()) << to_string(kind);
    ASSERT_EQ(h.cols(), 8) << to_string(kind);
    const std::vector<float> v = h.to_host_vector();
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](float e) { return e >= 0.0f; })) << "after ReLU";
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](float e) { return e > 0.0f; }));
    // Evaluation mode: no dropout, so embedding again gives the same values.
    EXPECT_EQ(model->embed(data.graph, data.features, gen).value().to_host_vector(), v);
  }
}

TEST(Embed, AOneLayerModelHasNoHiddenLayer) {
  const TrainData data = tiny_task();
  auto model = tiny_model(data, ModelKind::GCN, 1);
  Generator gen(0);
  EXPECT_THROW(model->embed(data.graph, data.features, gen), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
