// Python binding of full-batch training: _train(), the engine under edgewise.train()
// (python/edgewise/_training.py checks and converts in-memory data before it gets here).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/graph/reorder.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

std::vector<int64_t> int64_vector(const py::dict& arrays, const char* key, int64_t ndim) {
  auto a = as_int64(arrays[key].cast<py::array>(), "train", key);
  EW_REQUIRE(a.ndim() == ndim, "train: ", key, " must be ", ndim, "-D (got ", a.ndim(), "-D)");
  return std::vector<int64_t>(a.data(), a.data() + a.size());
}

// The arrays edgewise.train() prepared (name, x float32 [N, F], edge_index [2, E],
// y [N], num_classes, train_idx / valid_idx / test_idx) as a Dataset; prepare()
// validates it again.
gnn::Dataset dataset_from_arrays(const py::dict& arrays) {
  gnn::Dataset d;
  d.name = arrays["name"].cast<std::string>();
  auto x = as_contiguous<float>(arrays["x"].cast<py::array>());
  EW_REQUIRE(x.ndim() == 2, "train: x must be 2-D (got ", x.ndim(), "-D)");
  d.num_nodes = x.shape(0);
  d.features.rows = x.shape(0);
  d.features.cols = x.shape(1);
  d.features.format = gnn::FeatureFormat::Dense;
  d.features.dense.assign(x.data(), x.data() + x.size());
  d.edge_index = int64_vector(arrays, "edge_index", 2);
  d.labels = int64_vector(arrays, "y", 1);
  d.num_classes = arrays["num_classes"].cast<int64_t>();
  d.train_idx = int64_vector(arrays, "train_idx", 1);
  d.valid_idx = int64_vector(arrays, "valid_idx", 1);
  d.test_idx = int64_vector(arrays, "test_idx", 1);
  return d;
}

py::dict record_dict(const gnn::EpochRecord& r) {
  py::dict d;
  d["epoch"] = r.epoch;
  d["loss"] = r.loss;
  for (const auto& [name, value] : r.metrics.items()) d[py::str(name)] = value;
  d["lr"] = r.lr;
  d["epoch_ms"] = r.epoch_ms;
  return d;
}

py::array_t<float> matrix_to_numpy(const gnn::Tensor& t) {
  py::array_t<float> out = new_array<float>({t.rows(), t.cols()});
  const std::vector<float> host = t.to_host_vector();
  std::copy(host.begin(), host.end(), out.mutable_data());
  return out;
}

// Runs between epochs (with the GIL): pending signals first, so Ctrl-C stops the
// loop, then the caller's callback. A KeyboardInterrupt from either marks the run
// interrupted; any other Python error is kept and re-raised once fit() returns.
struct EpochHook {
  explicit EpochHook(py::object on_epoch) : callback(std::move(on_epoch)) {}

  py::object callback;  // None: signals only
  bool interrupted = false;
  std::optional<py::error_already_set> error;

  bool operator()(const gnn::EpochRecord& rec) {
    py::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (callback.is_none()) return true;
      py::object verdict = callback(record_dict(rec));
      if (verdict.is_none()) return true;
      const int truth = PyObject_IsTrue(verdict.ptr());
      if (truth < 0) throw py::error_already_set();
      return truth != 0;
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) {
        interrupted = true;
      } else {
        error = std::move(e);
      }
      return false;
    }
  }
};

py::dict train_py(const py::object& source, const std::string& model, int64_t epochs, int64_t hidden, float dropout,
                  float lr, float weight_decay, uint64_t seed, const std::string& device, const std::string& aggregation,
                  const std::string& features, int64_t log_every, bool normalize_features, int64_t patience,
                  const std::string& select, const py::object& on_epoch, const std::string& reorder,
                  const std::string& lr_schedule) {
  const gnn::LrSchedule schedule = gnn::parse_lr_schedule(lr_schedule);  // before any data is read
  std::optional<gnn::Dataset> in_memory;
  std::string spec;
  if (py::isinstance<py::dict>(source)) {
    in_memory = dataset_from_arrays(source.cast<py::dict>());
  } else {
    spec = source.cast<std::string>();
  }
  EpochHook hook(on_epoch);
  gnn::TrainResult result;
  std::string name;
  gnn::Tensor logits, embeddings;
  {
    py::gil_scoped_release release;
    const Device dev = Device::parse(device);
    require_available(dev, "train");  // before the dataset is loaded
    gnn::Dataset ds = in_memory ? std::move(*in_memory) : gnn::load_dataset_spec(spec).dataset;
    name = ds.name;
    // Trained in the reordered node order; logits and embeddings are mapped back below.
    const gnn::Ordering ordering = gnn::parse_ordering(reorder);
    std::optional<gnn::NodePermutation> permutation;
    if (ordering != gnn::Ordering::None) {
      permutation = gnn::node_ordering(ds.num_nodes, ds.src(), ds.dst(), ordering);
      ds = gnn::reorder_dataset(ds, *permutation);
    }
    gnn::PrepareOptions prep;
    prep.features = gnn::parse_feature_format(features);
    prep.normalize_features = normalize_features;
    gnn::TrainData data = gnn::prepare(ds, dev, prep);
    gnn::ModelConfig config;
    config.kind = gnn::parse_model_kind(model);
    config.in_features = data.features.cols();
    config.hidden_features = hidden;
    config.out_features = data.num_classes;
    config.dropout = dropout;
    config.aggregation.strategy = gnn::parse_strategy(aggregation);
    gnn::Generator gen(seed);
    auto net = gnn::make_model(config, gen, dev);
    gnn::TrainerOptions options;
    options.epochs = epochs;
    options.lr = lr;
    options.weight_decay = weight_decay;
    options.lr_schedule = schedule;
    options.seed = seed;
    options.log_every = log_every;
    options.patience = patience;
    options.selection = gnn::parse_model_selection(select);
    options.on_epoch = [&hook](const gnn::EpochRecord& rec) { return hook(rec); };
    gnn::Trainer trainer(*net, data, options);
    result = trainer.fit();
    if (!hook.error) {
      // The model as training left it (evaluation mode: dropout off).
      gnn::NoGradGuard no_grad;
      net->eval();
      logits = net->forward(data.graph, data.features, gen).value();
      embeddings = net->embed(data.graph, data.features, gen).value();
      if (permutation) {
        logits = gnn::rows_in_original_order(logits, *permutation);
        embeddings = gnn::rows_in_original_order(embeddings, *permutation);
      }
    }
  }
  if (hook.error) throw std::move(*hook.error);
  py::list history;
  for (const gnn::EpochRecord& r : result.history) history.append(record_dict(r));
  py::dict out;
  out["dataset"] = name;
  out["test_acc"] = result.test_acc;
  out["valid_acc"] = result.best_valid_acc;
  out["train_acc"] = result.train_acc;
  out["best_epoch"] = result.best_epoch;
  out["epoch_ms_median"] = result.epoch_ms_median;
  out["total_seconds"] = result.total_seconds;
  out["history"] = history;
  out["logits"] = matrix_to_numpy(logits);
  out["embeddings"] = matrix_to_numpy(embeddings);
  out["interrupted"] = hook.interrupted;
  out["stopped_early"] = result.stopped_early && !hook.interrupted;
  return out;
}

}  // namespace

void register_train(py::module_& m) {
  m.def("_train", &train_py, py::arg("source"), py::arg("model"), py::arg("epochs"), py::arg("hidden"),
        py::arg("dropout"), py::arg("lr"), py::arg("weight_decay"), py::arg("seed"), py::arg("device"),
        py::arg("aggregation"), py::arg("features"), py::arg("log_every"), py::arg("normalize_features"),
        py::arg("patience"), py::arg("select"), py::arg("on_epoch"), py::arg("reorder") = "none",
        py::arg("lr_schedule") = "constant",
        R"doc(Internal engine of edgewise.train() (use that: it checks in-memory data and wraps the result).

source: a dataset spec (str) or a dict of prepared arrays: name, x float32 [N, F],
edge_index int64 [2, E], y int64 [N], num_classes, train_idx / valid_idx / test_idx
int64 ascending. reorder: "none", "degree" or "rcm" (nodes relabelled for locality
before training; logits and embeddings come back in the original order). lr_schedule:
"constant" or "cosine" (lr annealed to 0 over the epochs). on_epoch: None or a callable taking the epoch record dict; a falsy
return other than None stops training. Pending signals are checked between epochs;
a KeyboardInterrupt stops training and sets 'interrupted'. Returns a dict of the
metrics, 'history', 'logits' [N, K], 'embeddings' [N, hidden], 'interrupted' and
'stopped_early'.)doc");
}

}  // namespace edgewise::python
