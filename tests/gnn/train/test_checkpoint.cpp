// Checkpoints: state_dict names and round trips for every layer and model, strict
// loading that changes nothing on a bad dict, optimizer state that continues the
// same updates bit for bit, the npz writer (read back by our reader and NumPy,
// atomic on failure), and Trainer resume equal to the uninterrupted run.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"
#include "edgewise/gnn/data/npz_writer.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "npz_writer.hpp"
#include "gnn_test_data.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

// Same bits (so -0.0 != 0.0 and equal NaNs match): the resume promise is bitwise.
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    return ::testing::AssertionFailure() << "shape " << a.shape_str() << " vs " << b.shape_str();
  const std::vector<float> x = a.to_host_vector(), y = b.to_host_vector();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::memcmp(&x[i], &y[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  }
  return ::testing::AssertionSuccess();
}

std::vector<Tensor> snapshot(const Module& m) {
  std::vector<Tensor> values;
  for (const Variable& p : m.parameters()) values.push_back(p.value().to(Device::cpu()));
  return values;
}

void expect_params_equal(const Module& m, const std::vector<Tensor>& expected, const std::string& what) {
  const std::vector<Variable> ps = m.parameters();
  ASSERT_EQ(ps.size(), expected.size()) << what;
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_TRUE(same_bits(ps[i].value(), expected[i])) << what << ", parameter " << i;
  }
}

std::vector<std::string> names_of(const Module& m) {
  std::vector<std::string> names;
  for (const auto& entry : m.named_parameters()) names.push_back(entry.first);
  return names;
}

// named_parameters() lists exactly parameters(), in the same order.
void expect_names_cover_parameters(const Module& m) {
  const NamedParameters named = m.named_parameters();
  const std::vector<Variable> ps = m.parameters();
  ASSERT_EQ(named.size(), ps.size()) << m.describe();
  for (size_t i = 0; i < ps.size(); ++i) EXPECT_EQ(named[i].second.impl(), ps[i].impl()) << m.describe() << " #" << i;
}

template <class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

TrainData small_task(Device device = Device::cpu()) { return planted_task(device, 300, 60, 120); }

ModelConfig config_for(ModelKind kind, const TrainData& data, int64_t hidden = 16) {
  ModelConfig c;
  c.kind = kind;
  c.in_features = data.features.cols();
  c.out_features = data.num_classes;
  c.hidden_features = hidden;
  c.gin_train_eps = true;
  return c;
}

using CheckpointTest = DeviceTest;

TEST(StateDictNames, EveryLayerAndModelUsesDottedNamesInParameterOrder) {
  Generator gen(1);
  Linear lin(4, 3, gen);
  EXPECT_EQ(names_of(lin), (std::vector<std::string>{"weight", "bias"}));
  GCNConv gcn(4, 3, gen);
  EXPECT_EQ(names_of(gcn), (std::vector<std::string>{"lin.weight", "bias"}));
  GINConvOptions gin_options;
  gin_options.train_eps = true;
  GINConv gin(4, 5, 3, gen, gin_options);
  EXPECT_EQ(names_of(gin),
            (std::vector<std::string>{"nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias", "eps"}));
  GINConv gin_fixed(4, 5, 3, gen);
  EXPECT_EQ(names_of(gin_fixed), (std::vector<std::string>{"nn.0.weight", "nn.0.bias", "nn.2.weight", "nn.2.bias"}));
  SAGEConv sage(4, 3, gen);
  EXPECT_EQ(names_of(sage), (std::vector<std::string>{"lin_l.weight", "lin_l.bias", "lin_r.weight"}));
  SAGEConvOptions pool;
  pool.aggregator = SageAggregator::MaxPool;
  SAGEConv sage_pool(4, 3, gen, pool);
  EXPECT_EQ(names_of(sage_pool), (std::vector<std::string>{"lin_l.weight", "lin_l.bias", "lin_r.weight",
                                                           "lin.weight", "lin.bias"}));
  for (const Module* m : std::initializer_list<const Module*>{&lin, &gcn, &gin, &gin_fixed, &sage, &sage_pool}) {
    expect_names_cover_parameters(*m);
  }

  ModelConfig c;
  c.in_features = 6;
  c.out_features = 2;
  c.layers = 3;
  c.kind = ModelKind::GCN;
  auto gcn_model = make_model(c, gen);
  EXPECT_EQ(names_of(*gcn_model), (std::vector<std::string>{"convs.0.lin.weight", "convs.0.bias", "convs.1.lin.weight",
                                                            "convs.1.bias", "convs.2.lin.weight", "convs.2.bias"}));
  c.kind = ModelKind::GraphSAGE;
  c.layers = 2;
  auto sage_model = make_model(c, gen);
  MiniBatchSAGE minibatch_model(c, gen);
  const std::vector<std::string> sage_names{"convs.0.lin_l.weight", "convs.0.lin_l.bias", "convs.0.lin_r.weight",
                                            "convs.1.lin_l.weight", "convs.1.lin_l.bias", "convs.1.lin_r.weight"};
  EXPECT_EQ(names_of(*sage_model), sage_names);
  EXPECT_EQ(names_of(minibatch_model), sage_names);  // so either loads the other's checkpoint
  c.kind = ModelKind::GIN;
  auto gin_model = make_model(c, gen);
  EXPECT_EQ(names_of(*gin_model).front(), "convs.0.nn.0.weight");
  for (const Module* m : std::initializer_list<const Module*>{gcn_model.get(), sage_model.get(), &minibatch_model,
                                                            gin_model.get()}) {
    expect_names_cover_parameters(*m);
  }
}

TEST(StateDict, IsAnIndependentHostCopy) {
  Generator gen(2);
  Linear lin(3, 2, gen);
  const StateDict state = lin.state_dict();
  ASSERT_EQ(state.keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(same_bits(state.at("weight"), lin.weight().value()));
  EXPECT_TRUE(state.at("weight").device().is_cpu());
  const std::vector<float> before = state.at("weight").to_host_vector();
  Variable w = lin.weight();
  w.mutable_value() = Tensor::full(3, 2, 7.0f);
  EXPECT_EQ(state.at("weight").to_host_vector(), before);
  EXPECT_NE(message_of([&] { (void)state.at("nope"); }).find("'nope'"), std::string::npos);
  StateDict dup;
  dup.insert("a", Tensor::zeros(1, 1));
  EXPECT_NE(message_of([&] { dup.insert("a", Tensor::zeros(1, 1)); }).find("duplicate key 'a'"), std::string::npos);
}

TEST_P(CheckpointTest, EveryLayerAndModelRoundTripsItsStateDict) {
  const TrainData data = small_task(device());
  std::vector<std::pair<std::unique_ptr<Module>, std::unique_ptr<Module>>> pairs;
  Generator g1(11), g2(22);
  const int64_t in = data.features.cols();
  pairs.emplace_back(std::make_unique<Linear>(in, 3, g1, true, WeightInit::LinearDefault, device()),
                     std::make_unique<Linear>(in, 3, g2, true, WeightInit::LinearDefault, device()));
  pairs.emplace_back(std::make_unique<GCNConv>(in, 3, g1, GCNConvOptions{}, device()),
                     std::make_unique<GCNConv>(in, 3, g2, GCNConvOptions{}, device()));
  SAGEConvOptions pool;
  pool.aggregator = SageAggregator::MaxPool;
  pairs.emplace_back(std::make_unique<SAGEConv>(in, 3, g1, pool, device()),
                     std::make_unique<SAGEConv>(in, 3, g2, pool, device()));
  GINConvOptions gin;
  gin.train_eps = true;
  gin.eps = 0.25f;
  pairs.emplace_back(std::make_unique<GINConv>(in, 5, 3, g1, gin, device()),
                     std::make_unique<GINConv>(in, 5, 3, g2, GINConvOptions{0.0f, true, {}}, device()));
  for (ModelKind kind : {ModelKind::GCN, ModelKind::GraphSAGE, ModelKind::GIN}) {
    pairs.emplace_back(make_model(config_for(kind, data), g1, device()),
                       make_model(config_for(kind, data), g2, device()));
  }
  pairs.emplace_back(std::make_unique<MiniBatchSAGE>(config_for(ModelKind::GraphSAGE, data), g1, device()),
                     std::make_unique<MiniBatchSAGE>(config_for(ModelKind::GraphSAGE, data), g2, device()));
  for (auto& [a, b] : pairs) {
    const std::vector<Tensor> a_values = snapshot(*a);
    ASSERT_FALSE(same_bits(a_values.front(), snapshot(*b).front())) << "different seeds must differ: " << a->describe();
    b->load_state_dict(a->state_dict());
    expect_params_equal(*b, a_values, b->describe());
    for (const Variable& p : b->parameters()) EXPECT_EQ(p.device(), device()) << b->describe();
  }
  // Loaded models compute the same logits.
  for (size_t i = 4; i < 7; ++i) {
    auto* a = dynamic_cast<NodeClassifier*>(pairs[i].first.get());
    auto* b = dynamic_cast<NodeClassifier*>(pairs[i].second.get());
    a->eval();
    b->eval();
    Generator ga(0), gb(0);
    EXPECT_TRUE(same_bits(a->forward(data.graph, data.features, ga).value(),
                          b->forward(data.graph, data.features, gb).value()))
        << a->describe();
  }
}

TEST_P(CheckpointTest, BadStateDictsNameTheKeyAndChangeNothing) {
  Generator g1(3), g2(4);
  ModelConfig c;
  c.kind = ModelKind::GCN;
  c.in_features = 5;
  c.out_features = 3;
  c.hidden_features = 4;
  auto model = make_model(c, g1, device());
  const std::vector<Tensor> before = snapshot(*model);
  const StateDict good = make_model(c, g2, device())->state_dict();

  // Wrong shape in the last parameter: the earlier ones would have been copied by a
  // loader that checks while it copies.
  StateDict wrong_shape;
  for (const auto& [key, t] : good) wrong_shape.insert(key, key == "convs.1.bias" ? Tensor::zeros(1, 5) : t);
  std::string msg = message_of([&] { model->load_state_dict(wrong_shape); });
  EXPECT_NE(msg.find("'convs.1.bias'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1, 5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1, 3]"), std::string::npos) << msg;
  expect_params_equal(*model, before, "after a wrong shape");

  StateDict missing;
  for (const auto& [key, t] : good) {
    if (key != "convs.1.lin.weight") missing.insert(key, t);
  }
  msg = message_of([&] { model->load_state_dict(missing); });
  EXPECT_NE(msg.find("missing key 'convs.1.lin.weight'"), std::string::npos) << msg;
  expect_params_equal(*model, before, "after a missing key");

  StateDict extra;
  for (const auto& [key, t] : good) extra.insert(key, t);
  extra.insert("convs.2.bias", Tensor::zeros(1, 3));
  msg = message_of([&] { model->load_state_dict(extra); });
  EXPECT_NE(msg.find("unexpected key 'convs.2.bias'"), std::string::npos) << msg;
  expect_params_equal(*model, before, "after an unexpected key");
  EXPECT_THROW(model->load_state_dict(extra), std::invalid_argument);

  model->load_state_dict(good);  // and the good one still loads
  expect_params_equal(*model, [&] {
    std::vector<Tensor> v;
    for (const auto& entry : good) v.push_back(entry.second);
    return v;
  }(), "after the good dict");
}

// ---- optimizers --------------------------------------------------------------

struct OptimizerCase {
  std::string name;
  std::function<std::unique_ptr<Optimizer>(std::vector<ParamGroup>)> make;
};

std::vector<OptimizerCase> optimizer_cases() {
  AdamOptions adam;
  adam.lr = 0.05f;
  SgdOptions momentum;
  momentum.lr = 0.1f;
  momentum.momentum = 0.9f;
  SgdOptions nesterov = momentum;
  nesterov.nesterov = true;
  return {
      {"adam", [=](std::vector<ParamGroup> g) { return std::make_unique<Adam>(std::move(g), adam); }},
      {"adamw", [=](std::vector<ParamGroup> g) { return make_adamw(std::move(g), adam); }},
      {"sgd-momentum", [=](std::vector<ParamGroup> g) { return std::make_unique<Sgd>(std::move(g), momentum); }},
      {"sgd-nesterov", [=](std::vector<ParamGroup> g) { return std::make_unique<Sgd>(std::move(g), nesterov); }},
  };
}

// One step of a fixed least-squares-like problem: cross entropy of x W + b.
void train_step(Linear& lin, Optimizer& opt, const Variable& x, const IndexTensor& labels, const IndexTensor& rows) {
  opt.zero_grad();
  Variable loss = cross_entropy(lin.forward(x), labels, rows);
  loss.backward();
  opt.step();
}

TEST_P(CheckpointTest, OptimizerStateContinuesTheSameUpdatesBitForBit) {
  auto rng = rng_for(7);
  const int64_t n = 40, in = 6, k = 3;
  Variable x(Tensor::from_host(random_values<float>(rng, n * in, -1, 1), n, in, device()));
  std::vector<int64_t> label_values(static_cast<size_t>(n)), row_values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    label_values[static_cast<size_t>(i)] = (i * 7) % k;
    row_values[static_cast<size_t>(i)] = i;
  }
  const IndexTensor labels = IndexTensor::vector(label_values, device());
  const IndexTensor rows = IndexTensor::vector(row_values, device());
  for (const OptimizerCase& oc : optimizer_cases()) {
    SCOPED_TRACE(oc.name);
    Generator g1(5), g2(6);
    Linear a(in, k, g1, true, WeightInit::LinearDefault, device());
    // Two groups with different decay, so positions run across groups.
    auto opt_a = oc.make({ParamGroup{{a.weight()}, 0.01f}, ParamGroup{{a.bias()}, 0.0f}});
    for (int i = 0; i < 4; ++i) train_step(a, *opt_a, x, labels, rows);
    const StateDict model_state = a.state_dict();
    const OptimizerState opt_state = opt_a->state_dict();
    for (int i = 0; i < 5; ++i) train_step(a, *opt_a, x, labels, rows);

    Linear b(in, k, g2, true, WeightInit::LinearDefault, device());
    auto opt_b = oc.make({ParamGroup{{b.weight()}, 0.01f}, ParamGroup{{b.bias()}, 0.0f}});
    b.load_state_dict(model_state);
    opt_b->load_state_dict(opt_state);
    for (int i = 0; i < 5; ++i) train_step(b, *opt_b, x, labels, rows);
    expect_params_equal(b, snapshot(a), "after 4 + 5 steps");

    // Without the optimizer state the continuation differs (the test can fail).
    Linear c(in, k, g2, true, WeightInit::LinearDefault, device());
    auto opt_c = oc.make({ParamGroup{{c.weight()}, 0.01f}, ParamGroup{{c.bias()}, 0.0f}});
    c.load_state_dict(model_state);
    for (int i = 0; i < 5; ++i) train_step(c, *opt_c, x, labels, rows);
    EXPECT_FALSE(same_bits(c.weight().value(), a.weight().value()));

    // The exported state names both positions.
    const std::string kind = opt_state.kind;
    if (kind == "sgd") {
      EXPECT_EQ(opt_state.tensors.keys(), (std::vector<std::string>{"0.momentum_buffer", "1.momentum_buffer"}));
      EXPECT_TRUE(opt_state.counters.empty());
    } else {
      EXPECT_EQ(opt_state.tensors.keys(),
                (std::vector<std::string>{"0.exp_avg", "0.exp_avg_sq", "1.exp_avg", "1.exp_avg_sq"}));
      EXPECT_EQ(opt_state.counters.at("0.step"), 4);
      EXPECT_EQ(opt_state.counters.at("1.step"), 4);
    }
  }
}

TEST(OptimizerState, BadStateNamesTheKeyAndChangesNothing) {
  Generator gen(8);
  Linear lin(3, 2, gen);
  Adam adam(lin.parameters(), AdamOptions{});
  Variable x(Tensor::full(4, 3, 0.5f));
  const IndexTensor labels = IndexTensor::vector({0, 1, 0, 1});
  const IndexTensor rows = IndexTensor::vector({0, 1, 2, 3});
  train_step(lin, adam, x, labels, rows);
  const OptimizerState good = adam.state_dict();
  auto expect_unchanged = [&](const std::string& what) {
    const OptimizerState now = adam.state_dict();
    ASSERT_EQ(now.tensors.keys(), good.tensors.keys()) << what;
    for (const auto& [key, t] : good.tensors) EXPECT_TRUE(same_bits(now.tensors.at(key), t)) << what << " " << key;
    EXPECT_EQ(now.counters, good.counters) << what;
  };
  auto with = [&](auto edit) {
    OptimizerState s;
    s.kind = good.kind;
    s.counters = good.counters;
    edit(s);
    return s;
  };

  OptimizerState wrong_kind = good;
  wrong_kind.kind = "sgd";
  std::string msg = message_of([&] { adam.load_state_dict(wrong_kind); });
  EXPECT_NE(msg.find("kind 'sgd'"), std::string::npos) << msg;
  expect_unchanged("wrong kind");

  OptimizerState wrong_shape = with([&](OptimizerState& s) {
    for (const auto& [key, t] : good.tensors) s.tensors.insert(key, key == "1.exp_avg_sq" ? Tensor::zeros(2, 1) : t);
  });
  msg = message_of([&] { adam.load_state_dict(wrong_shape); });
  EXPECT_NE(msg.find("'1.exp_avg_sq' has shape [2, 1]"), std::string::npos) << msg;
  expect_unchanged("wrong shape");

  OptimizerState missing = with([&](OptimizerState& s) {
    for (const auto& [key, t] : good.tensors) {
      if (key != "1.exp_avg") s.tensors.insert(key, t);
    }
  });
  msg = message_of([&] { adam.load_state_dict(missing); });
  EXPECT_NE(msg.find("missing key '1.exp_avg'"), std::string::npos) << msg;
  expect_unchanged("missing key");

  OptimizerState out_of_range = with([&](OptimizerState& s) {
    for (const auto& [key, t] : good.tensors) s.tensors.insert(key, t);
    s.tensors.insert("2.exp_avg", Tensor::zeros(1, 2));
  });
  msg = message_of([&] { adam.load_state_dict(out_of_range); });
  EXPECT_NE(msg.find("'2.exp_avg' refers to parameter 2"), std::string::npos) << msg;

  OptimizerState bad_step = good;
  bad_step.counters["0.step"] = 0;
  msg = message_of([&] { adam.load_state_dict(bad_step); });
  EXPECT_NE(msg.find("'0.step' (0) must be >= 1"), std::string::npos) << msg;
  OptimizerState unknown = good;
  unknown.tensors.insert("0.momentum_buffer", Tensor::zeros(3, 2));
  msg = message_of([&] { adam.load_state_dict(unknown); });
  EXPECT_NE(msg.find("unexpected key '0.momentum_buffer'"), std::string::npos) << msg;
  expect_unchanged("the bad ones");
}

// ---- npz writer ---------------------------------------------------------------

NpzEntries sample_entries() {
  NpzEntries e;
  e.emplace_back("matrix", npy_array(std::vector<float>{1.5f, -2.0f, 0.25f, 3.0f, -0.0f, 1e-30f}, {2, 3}));
  e.emplace_back("doubles", npy_array(std::vector<double>{0.1, -1e300, 2.5}, {3}));
  e.emplace_back("ints", npy_array(std::vector<int64_t>{-1, 0, int64_t{1} << 62}, {3, 1}));
  e.emplace_back("big", npy_scalar<uint64_t>(~uint64_t{0}));
  e.emplace_back("bytes", npy_array(std::vector<uint8_t>{'s', 'g', 'd'}, {3}));
  e.emplace_back("empty", npy_array(std::vector<float>{}, {0, 4}));
  e.emplace_back("dotted.name.0", npy_scalar<int64_t>(42));
  return e;
}

void expect_archive_holds(const std::string& path, const NpzEntries& entries) {
  NpzArchive archive = NpzArchive::open(path);
  std::vector<std::string> keys;
  for (const auto& entry : entries) keys.push_back(entry.first);
  EXPECT_EQ(archive.keys(), keys);
  for (const auto& [key, expected] : entries) {
    const NpyArray a = archive.read(key);
    EXPECT_EQ(a.dtype, expected.dtype) << key;
    EXPECT_EQ(a.shape, expected.shape) << key;
    EXPECT_EQ(a.data, expected.data) << key;
  }
}

TEST(NpzWriter, OurReaderReadsBackEveryDtypeAndShape) {
  TempDir dir;
  const NpzEntries entries = sample_entries();
  const std::string path = dir.file("a.npz").string();
  write_npz(path, entries);
  expect_archive_holds(path, entries);
  const std::string path64 = dir.file("b.npz").string();
  write_npz(path64, entries, NpzWriteOptions{true});
  expect_archive_holds(path64, entries);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 2)
      << "no temporary files are left";
}

// NumPy reads what we write (skipped, with the reason, without python3 + numpy).
TEST(NpzWriter, NumPyReadsTheArchive) {
  if (std::system("python3 -c 'import numpy' > /dev/null 2>&1") != 0) GTEST_SKIP() << "python3 with numpy not found";
  TempDir dir;
  for (bool zip64 : {false, true}) {
    const std::string path = dir.file(zip64 ? "z64.npz" : "plain.npz").string();
    write_npz(path, sample_entries(), NpzWriteOptions{zip64});
    const std::string script =
        "import numpy as np, sys\n"
        "z = np.load(sys.argv[1])\n"
        "keys = ['matrix', 'doubles', 'ints', 'big', 'bytes', 'empty', 'dotted.name.0']\n"
        "assert list(z.keys()) == keys, list(z.keys())\n"
        "m = z['matrix']; assert m.dtype == np.float32 and m.shape == (2, 3), m\n"
        "assert m.tolist() == [[1.5, -2.0, 0.25], [3.0, -0.0, np.float32(1e-30)]], m\n"
        "assert z['doubles'].tolist() == [0.1, -1e300, 2.5]\n"
        "assert z['ints'].dtype == np.int64 and z['ints'].ravel().tolist() == [-1, 0, 1 << 62]\n"
        "assert z['big'].dtype == np.uint64 and z['big'].shape == () and int(z['big']) == 2**64 - 1\n"
        "assert z['bytes'].tobytes() == b'sgd'\n"
        "assert z['empty'].shape == (0, 4)\n"
        "assert int(z['dotted.name.0']) == 42\n";
    const std::string script_path = dir.file("check.py").string();
    std::ofstream(script_path) << script;
    EXPECT_EQ(std::system(("python3 " + script_path + " " + path).c_str()), 0) << "numpy could not read " << path;
  }
}

TEST(NpzWriter, BadEntriesAreRefusedBeforeWriting) {
  TempDir dir;
  const std::string path = dir.file("x.npz").string();
  NpzEntries dup{{"a", npy_scalar<int64_t>(1)}, {"a", npy_scalar<int64_t>(2)}};
  EXPECT_NE(message_of([&] { write_npz(path, dup); }).find("duplicate key 'a'"), std::string::npos);
  NpzEntries slash{{"a/b", npy_scalar<int64_t>(1)}};
  EXPECT_NE(message_of([&] { write_npz(path, slash); }).find("'a/b'"), std::string::npos);
  NpyArray short_data = npy_array(std::vector<float>{1, 2, 3, 4}, {2, 2});
  short_data.data.pop_back();
  NpzEntries bad{{"m", short_data}};
  EXPECT_NE(message_of([&] { write_npz(path, bad); }).find("key 'm' has 15 data bytes"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_THROW(npy_array(std::vector<float>{1, 2, 3}, {2, 2}), std::invalid_argument);
  EXPECT_THROW(npy_array(std::vector<float>{}, {int64_t{1} << 40, int64_t{1} << 40}), std::invalid_argument);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NpzWriter, AFailedWriteNamesThePathAndKeepsTheOldFile) {
  TempDir dir;
  // A directory that does not exist: no temporary file can be made.
  const std::string nowhere = (dir.path() / "missing" / "c.npz").string();
  std::string msg = message_of([&] { write_npz(nowhere, sample_entries()); });
  EXPECT_NE(msg.find("'" + nowhere + "'"), std::string::npos) << msg;
  EXPECT_THROW(write_npz(nowhere, sample_entries()), std::runtime_error);

  // A write that fails half-way (file size limit; works as root too): the old file stays.
  const std::string path = dir.file("c.npz").string();
  write_npz(path, sample_entries());
  const std::string old_bytes = file_bytes(path);
  NpzEntries large{{"x", npy_array(std::vector<float>(1 << 16, 1.0f), {1 << 16})}};
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  msg = message_of([&] { write_npz(path, large); });
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(msg.find("cannot write '" + path + "'"), std::string::npos) << msg;
  EXPECT_EQ(file_bytes(path), old_bytes);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 1)
      << "the temporary file is removed";

  // The target is a directory: the rename fails, nothing is left behind.
  std::filesystem::create_directory(dir.file("d.npz"));
  msg = message_of([&] { write_npz(dir.file("d.npz").string(), sample_entries()); });
  EXPECT_NE(msg.find(dir.file("d.npz").string()), std::string::npos) << msg;
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 2);
}

// ---- Trainer checkpoints -------------------------------------------------------

struct RunSpec {
  ModelKind kind = ModelKind::GCN;
  OptimizerKind optimizer = OptimizerKind::Adam;
  ModelSelection selection = ModelSelection::BestValidation;
  int64_t patience = 0;
};

TrainerOptions options_for(const RunSpec& spec, int64_t epochs) {
  TrainerOptions o;
  o.epochs = epochs;
  o.seed = 9;
  o.log_every = 0;
  o.optimizer = spec.optimizer;
  o.selection = spec.selection;
  o.patience = spec.patience;
  return o;
}

void expect_same_result(const TrainResult& a, const TrainResult& b) {
  ASSERT_EQ(a.history.size(), b.history.size());
  for (size_t i = 0; i < a.history.size(); ++i) {
    const EpochRecord &x = a.history[i], &y = b.history[i];
    EXPECT_EQ(x.epoch, y.epoch);
    EXPECT_EQ(x.loss, y.loss) << "epoch " << x.epoch;
    EXPECT_EQ(x.evaluated, y.evaluated) << "epoch " << x.epoch;
    EXPECT_EQ(x.lr, y.lr) << "epoch " << x.epoch;
    EXPECT_EQ(x.metrics.items(), y.metrics.items()) << "epoch " << x.epoch;
  }
  EXPECT_EQ(a.best_epoch, b.best_epoch);
  EXPECT_EQ(a.best_valid_acc, b.best_valid_acc);
  EXPECT_EQ(a.test_acc, b.test_acc);
  EXPECT_EQ(a.train_acc, b.train_acc);
  EXPECT_EQ(a.stopped_early, b.stopped_early);
}

TEST_P(CheckpointTest, ResumingGivesBitwiseTheUninterruptedRun) {
  const TrainData data = small_task(device());
  const std::vector<RunSpec> specs{
      {ModelKind::GCN, OptimizerKind::Adam, ModelSelection::BestValidation, 0},
      {ModelKind::GraphSAGE, OptimizerKind::Sgd, ModelSelection::LastEpoch, 0},
      {ModelKind::GIN, OptimizerKind::AdamW, ModelSelection::BestValidation, 0},
      {ModelKind::GCN, OptimizerKind::Adam, ModelSelection::BestValidation, 4},  // may stop early
  };
  for (const RunSpec& spec : specs) {
    SCOPED_TRACE(std::string(to_string(spec.kind)) + " optimizer " + std::to_string(static_cast<int>(spec.optimizer)) +
                 " patience " + std::to_string(spec.patience));
    TempDir dir;
    const ModelConfig config = config_for(spec.kind, data);
    // A: 30 epochs uninterrupted.
    Generator ga(1);
    auto model_a = make_model(config, ga, device());
    const TrainResult a = Trainer(*model_a, data, options_for(spec, 30)).fit();

    // B: 12 epochs with checkpoints every 5 (and at the end), then a fresh model and
    // Trainer resume to 30; its first initialisation differs from A's.
    Generator gb(1);
    auto model_b = make_model(config, gb, device());
    TrainerOptions first = options_for(spec, 12);
    first.checkpoint_path = dir.file("run.npz").string();
    first.checkpoint_every = 5;
    const TrainResult b_first = Trainer(*model_b, data, first).fit();
    ASSERT_TRUE(std::filesystem::exists(first.checkpoint_path));
    EXPECT_EQ(NpzArchive::open(first.checkpoint_path).read("trainer.epoch").scalar<int64_t>(),
              b_first.history.back().epoch);

    Generator gc(77);
    auto model_c = make_model(config, gc, device());
    TrainerOptions resumed = options_for(spec, 30);
    resumed.resume_path = first.checkpoint_path;
    const TrainResult c = Trainer(*model_c, data, resumed).fit();
    expect_same_result(a, c);
    expect_params_equal(*model_c, snapshot(*model_a), "resumed model");
  }
}

// The cosine schedule spans the run's epochs: a run stopped at epoch 11 (on_epoch) and
// resumed with the same epochs trains at the same learning rates, bitwise, with
// eval_every 3 (evaluations at 3, 6, ... and the last).
TEST_P(CheckpointTest, ACosineScheduleResumesBitwise) {
  const TrainData data = small_task(device());
  const ModelConfig config = config_for(ModelKind::GCN, data);
  TrainerOptions o = options_for({}, 20);
  o.lr_schedule = LrSchedule::Cosine;
  o.eval_every = 3;
  Generator ga(1);
  auto model_a = make_model(config, ga, device());
  const TrainResult a = Trainer(*model_a, data, o).fit();
  ASSERT_EQ(a.history.size(), 20u);
  for (const EpochRecord& r : a.history) {
    EXPECT_FLOAT_EQ(static_cast<float>(r.lr), scheduled_lr(LrSchedule::Cosine, o.lr, r.epoch, 20));
    EXPECT_EQ(r.evaluated, r.epoch % 3 == 0 || r.epoch == 20) << "epoch " << r.epoch;
  }
  EXPECT_GT(a.history[0].lr, a.history[10].lr);
  EXPECT_GT(a.history[10].lr, a.history[19].lr);

  TempDir dir;
  TrainerOptions first = o;
  first.checkpoint_path = dir.file("cos.npz").string();
  first.on_epoch = [](const EpochRecord& r) { return r.epoch < 11; };  // stops after epoch 11
  Generator gb(1);
  auto model_b = make_model(config, gb, device());
  const TrainResult b = Trainer(*model_b, data, first).fit();
  ASSERT_EQ(b.history.size(), 11u);
  // An on_epoch stop is an interrupt: resuming continues the run.
  TrainerOptions resumed = o;
  resumed.resume_path = first.checkpoint_path;
  Generator gc(77);
  auto model_c = make_model(config, gc, device());
  const TrainResult c = Trainer(*model_c, data, resumed).fit();
  expect_same_result(a, c);
}

TEST(TrainerCheckpoint, HoldsTheDocumentedKeys) {
  const TrainData data = small_task();
  TempDir dir;
  Generator gen(1);
  auto model = make_model(config_for(ModelKind::GCN, data), gen);
  TrainerOptions o = options_for({}, 3);
  o.checkpoint_path = dir.file("ck.npz").string();
  const TrainResult r = Trainer(*model, data, o).fit();
  NpzArchive archive = NpzArchive::open(o.checkpoint_path);
  const std::vector<std::string> expected{
      "checkpoint.version", "trainer.epoch", "trainer.stopped_early", "trainer.elapsed_seconds", "rng.seed",
      "rng.next_stream", "model.convs.0.lin.weight", "model.convs.0.bias", "model.convs.1.lin.weight",
      "model.convs.1.bias", "optim.kind", "optim.0.exp_avg", "optim.0.exp_avg_sq", "optim.1.exp_avg",
      "optim.1.exp_avg_sq", "optim.2.exp_avg", "optim.2.exp_avg_sq", "optim.3.exp_avg", "optim.3.exp_avg_sq",
      "optim.0.step", "optim.1.step", "optim.2.step", "optim.3.step", "history.epoch", "history.evaluated",
      "history.loss", "history.epoch_ms", "history.lr", "history.metric.train_acc", "history.metric.valid_acc",
      "history.metric.valid_loss", "history.metric.test_acc", "selection.best_epoch", "selection.best.train_acc",
      "selection.best.valid_acc", "selection.best.valid_loss", "selection.best.test_acc", "selection.since_best",
      "selection.last_epoch"};
  EXPECT_EQ(archive.keys(), expected);
  EXPECT_EQ(archive.read("trainer.epoch").scalar<int64_t>(), 3);
  EXPECT_EQ(archive.read("optim.0.step").scalar<int64_t>(), 3);
  EXPECT_EQ(archive.read("history.loss").as<double>()[2], r.history[2].loss);
  EXPECT_EQ(archive.read("selection.best_epoch").scalar<int64_t>(), r.best_epoch);
  const std::vector<uint8_t> kind = archive.read("optim.kind").as<uint8_t>();
  EXPECT_EQ(std::string(kind.begin(), kind.end()), "adam");
  // The dropout generator: seed 9, two dropout streams per training epoch (input + hidden).
  EXPECT_EQ(archive.read("rng.seed").as<double>()[0], 9.0);
  EXPECT_EQ(archive.read("rng.next_stream").as<double>()[0], 6.0);
  EXPECT_TRUE(same_bits(model->state_dict().at("convs.1.bias"),
                        Tensor::from_host(archive.read("model.convs.1.bias").as<float>(), 1, data.num_classes)));
}

TEST(TrainerCheckpoint, ACheckpointThatDoesNotFitIsAClearErrorAndChangesNothing) {
  const TrainData data = small_task();
  TempDir dir;
  Generator gen(1);
  auto small = make_model(config_for(ModelKind::GCN, data, 16), gen);
  TrainerOptions o = options_for({}, 3);
  o.checkpoint_path = dir.file("ck.npz").string();
  Trainer(*small, data, o).fit();

  auto wide = make_model(config_for(ModelKind::GCN, data, 32), gen);
  const std::vector<Tensor> before = snapshot(*wide);
  TrainerOptions r = options_for({}, 6);
  r.resume_path = o.checkpoint_path;
  const std::string msg = message_of([&] { Trainer(*wide, data, r).fit(); });
  EXPECT_NE(msg.find(o.checkpoint_path), std::string::npos) << msg;
  EXPECT_NE(msg.find("'convs.0.lin.weight'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[" + std::to_string(data.features.cols()) + ", 16]"), std::string::npos) << msg;
  expect_params_equal(*wide, before, "after a checkpoint of another hidden size");

  // Another optimizer kind: named too, and nothing changes.
  auto same = make_model(config_for(ModelKind::GCN, data, 16), gen);
  const std::vector<Tensor> same_before = snapshot(*same);
  r.optimizer = OptimizerKind::Sgd;
  const std::string kind_msg = message_of([&] { Trainer(*same, data, r).fit(); });
  EXPECT_NE(kind_msg.find("kind 'adam'"), std::string::npos) << kind_msg;
  expect_params_equal(*same, same_before, "after a checkpoint of another optimizer");

  // Fewer epochs than the checkpoint has run, a missing file, and a file that is no checkpoint.
  r.optimizer = OptimizerKind::Adam;
  r.epochs = 2;
  EXPECT_NE(message_of([&] { Trainer(*same, data, r).fit(); }).find("past the requested 2 epochs"), std::string::npos);
  r.epochs = 6;
  r.resume_path = dir.file("none.npz").string();
  EXPECT_NE(message_of([&] { Trainer(*same, data, r).fit(); }).find(r.resume_path), std::string::npos);
  const std::string other = dir.file("other.npz").string();
  write_npz(other, {{"node_feat", npy_scalar<float>(1.0f)}});
  r.resume_path = other;
  const std::string other_msg = message_of([&] { Trainer(*same, data, r).fit(); });
  EXPECT_NE(other_msg.find("missing key 'checkpoint.version'"), std::string::npos) << other_msg;
  expect_params_equal(*same, same_before, "after the failed resumes");

  TrainerOptions bad = options_for({}, 3);
  bad.checkpoint_every = 2;
  EXPECT_NE(message_of([&] { Trainer(*same, data, bad); }).find("needs a checkpoint_path"), std::string::npos);
}

// A checkpoint path that cannot be written is refused before any training.
TEST(TrainerCheckpoint, AnUnwritableCheckpointPathFailsAtConstruction) {
  const TrainData data = small_task();
  TempDir dir;
  Generator gen(1);
  auto model = make_model(config_for(ModelKind::GCN, data), gen);
  TrainerOptions o = options_for({}, 3);
  o.checkpoint_path = (dir.path() / "no" / "ck.npz").string();
  std::string msg = message_of([&] { Trainer(*model, data, o); });
  EXPECT_NE(msg.find("'" + o.checkpoint_path + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not exist"), std::string::npos) << msg;
  o.checkpoint_path = dir.path().string();
  msg = message_of([&] { Trainer(*model, data, o); });
  EXPECT_NE(msg.find("names a directory"), std::string::npos) << msg;
  MiniBatchSAGE sage(config_for(ModelKind::GraphSAGE, data), gen);
  MiniBatchTrainerOptions mo;
  mo.checkpoint_path = (dir.path() / "no" / "mb.npz").string();
  EXPECT_THROW(MiniBatchTrainer(sage, data, mo), std::invalid_argument);
}

// MiniBatchTrainer: both seed orders (the loss-prioritised one keeps its sampler's
// priorities), a checkpoint at a multiple of eval_every (10 of 20, every 5).
TEST_P(CheckpointTest, ResumingAMiniBatchRunGivesBitwiseTheUninterruptedRun) {
  const TrainData data = small_task(device());
  for (SeedOrder order : {SeedOrder::Shuffle, SeedOrder::LossPrioritized}) {
    SCOPED_TRACE(order == SeedOrder::Shuffle ? "shuffle" : "loss-prioritized");
    TempDir dir;
    const ModelConfig config = config_for(ModelKind::GraphSAGE, data);
    auto options = [&](int64_t epochs) {
      MiniBatchTrainerOptions o;
      o.fanouts = {5, 5};
      o.batch_size = 64;
      o.epochs = epochs;
      o.seed = 3;
      o.log_every = 0;
      o.eval_every = 5;
      o.seed_order = order;
      return o;
    };
    Generator ga(1);
    MiniBatchSAGE model_a(config, ga, device());
    const MiniBatchTrainResult a = MiniBatchTrainer(model_a, data, options(20)).fit();

    Generator gb(1);
    MiniBatchSAGE model_b(config, gb, device());
    MiniBatchTrainerOptions first = options(10);
    first.checkpoint_path = dir.file("mb.npz").string();
    first.checkpoint_every = 5;
    MiniBatchTrainer(model_b, data, first).fit();
    EXPECT_EQ(NpzArchive::open(first.checkpoint_path).contains("sampler.priorities"),
              order == SeedOrder::LossPrioritized);

    Generator gc(99);
    MiniBatchSAGE model_c(config, gc, device());
    MiniBatchTrainerOptions resumed = options(20);
    resumed.resume_path = first.checkpoint_path;
    const MiniBatchTrainResult c = MiniBatchTrainer(model_c, data, resumed).fit();
    expect_same_result(a, c);
    expect_params_equal(model_c, snapshot(model_a), "resumed minibatch model");

    // The other seed order does not fit the checkpoint.
    MiniBatchTrainerOptions other = options(20);
    other.seed_order = order == SeedOrder::Shuffle ? SeedOrder::LossPrioritized : SeedOrder::Shuffle;
    other.resume_path = first.checkpoint_path;
    const std::string msg = message_of([&] { MiniBatchTrainer(model_c, data, other).fit(); });
    EXPECT_NE(msg.find("'sampler.priorities'"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, CheckpointTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
