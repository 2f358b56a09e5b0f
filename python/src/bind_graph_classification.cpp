// Python binding of graph classification: load_graph_dataset() (a graph collection as
// NumPy arrays) and train_graph_classifier() (edgewise-train --task graph in-process).
#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <vector>

#include "edgewise/gnn/train/graph_classification.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v, std::initializer_list<py::ssize_t> shape) {
  py::array_t<T> out = new_array<T>(shape);
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

py::dict load_graph_dataset_py(const std::string& spec, uint64_t seed) {
  gnn::GraphDataset d;
  {
    py::gil_scoped_release release;
    d = gnn::load_graph_dataset(spec, seed);
  }
  const auto g = static_cast<py::ssize_t>(d.num_graphs());
  const auto e = static_cast<py::ssize_t>(d.src.size());
  py::dict out;
  out["name"] = d.name;
  out["num_classes"] = d.num_classes;
  out["node_offsets"] = to_numpy(d.node_offsets, {g + 1});
  out["edge_offsets"] = to_numpy(d.edge_offsets, {g + 1});
  out["src"] = to_numpy(d.src, {e});
  out["dst"] = to_numpy(d.dst, {e});
  out["labels"] = to_numpy(d.labels, {g});
  out["x"] = to_numpy(d.features, {static_cast<py::ssize_t>(d.total_nodes()), d.num_features});
  out["folds"] = to_numpy(d.folds, {static_cast<py::ssize_t>(d.folds.size())});
  out["note"] = d.note;
  return out;
}

py::dict train_graph_classifier_py(const std::string& dataset, const std::vector<int64_t>& folds, int64_t num_folds,
                                   int64_t epochs, int64_t batch_size, int64_t hidden, int64_t layers, double lr,
                                   double weight_decay, double dropout, const std::string& pooling, bool batch_norm,
                                   uint64_t seed, int64_t log_every, int64_t threads,
                                   const std::string& lr_schedule) {
  EW_REQUIRE(threads >= 0, "train_graph_classifier: threads (", threads, ") must be >= 0");
  gnn::GraphTaskOptions o;
  o.dataset = dataset;
  o.folds = folds;
  o.num_folds = num_folds;
  o.model.hidden_features = hidden;
  o.model.layers = layers;
  o.model.dropout = static_cast<float>(dropout);
  o.model.pooling = parse_reduce_op(pooling);
  o.model.batch_norm = batch_norm;
  o.train.epochs = epochs;
  o.train.batch_size = batch_size;
  o.train.lr = static_cast<float>(lr);
  o.train.weight_decay = static_cast<float>(weight_decay);
  o.train.lr_schedule = gnn::parse_lr_schedule(lr_schedule);
  o.train.seed = seed;
  o.train.log_every = log_every;
  gnn::GraphTaskResult r;
  {
    py::gil_scoped_release release;
    // The thread count is a per-thread OpenMP setting: set for this call, then restored.
    const int saved_threads = omp_get_max_threads();
    if (threads > 0) omp_set_num_threads(static_cast<int>(threads));
    try {
      r = gnn::run_graph_task(o);
    } catch (...) {
      omp_set_num_threads(saved_threads);
      throw;
    }
    omp_set_num_threads(saved_threads);
  }
  py::list per_fold;
  std::vector<double> test_acc;
  for (const gnn::FoldResult& f : r.folds) {
    py::dict d;
    d["fold"] = f.fold;
    d["test_acc"] = f.test_acc;
    d["valid_acc"] = f.best_valid_acc;
    d["train_acc"] = f.train_acc;
    d["best_epoch"] = f.best_epoch;
    d["epoch_ms_median"] = f.epoch_ms_median;
    d["seconds"] = f.seconds;
    per_fold.append(d);
    test_acc.push_back(f.test_acc);
  }
  py::dict out;
  out["dataset"] = r.dataset;
  out["num_graphs"] = r.num_graphs;
  out["folds_source"] = r.folds_source;
  out["model"] = r.model;
  out["test_acc_mean"] = r.test_acc_mean;
  out["test_acc_std"] = r.test_acc_std;
  out["valid_acc_mean"] = r.valid_acc_mean;
  out["epoch_ms_median"] = r.epoch_ms_median;
  out["seconds"] = r.seconds;
  out["test_acc"] = test_acc;
  out["folds"] = per_fold;
  return out;
}

}  // namespace

void register_graph_classification(py::module_& m) {
  m.def("load_graph_dataset", &load_graph_dataset_py, py::arg("spec"), py::arg("seed") = 0,
        R"doc(Load a graph collection (graph classification) as NumPy arrays.

spec: "synthetic" (a seeded two-class set told apart by structure), a path to an .npz in
    the reddit_threads layout (edge_index with per-graph local ids, num_nodes_list,
    num_edges_list, graph_label, optional fold / node_feat), a TU folder or prefix
    (DS_A.txt, DS_graph_indicator.txt, DS_graph_labels.txt, optional node labels and
    attributes), or a name looked up in default_data_dir() ("reddit_threads").
Returns a dict: name, num_classes, node_offsets [G+1], edge_offsets [G+1], src / dst [E]
(ids local to each graph), labels [G], x [N, F] float32 (one-hot in-degrees when the data
has no node features), folds [G] (empty without a stored split), note.
Raises edgewise.DataFileError naming the file and line or key on malformed input.)doc");
  m.def("train_graph_classifier", &train_graph_classifier_py, py::arg("dataset") = "auto",
        py::arg("folds") = std::vector<int64_t>{0, 1, 2}, py::arg("num_folds") = 10, py::arg("epochs") = 50,
        py::arg("batch_size") = 128, py::arg("hidden") = 64, py::arg("layers") = 3, py::arg("lr") = 0.01,
        py::arg("weight_decay") = 0.0, py::arg("dropout") = 0.5, py::arg("pooling") = "sum",
        py::arg("batch_norm") = false, py::arg("seed") = 0, py::arg("log_every") = 10,
        py::arg("threads") = 1, py::arg("lr_schedule") = "constant",
        R"doc(Cross-validated GIN graph classification, as edgewise-train --task graph.

For each test fold k in `folds` (empty list: all): valid = fold k + 1, train = the rest;
the reported test accuracy is the one of the epoch with the best validation accuracy.
Folds: the dataset's stored ones when it has num_folds of them, else stratified (seeded).
threads: OpenMP threads for this call (default 1, as edgewise-train --task graph; 0: OpenMP's default).
lr_schedule: "constant" or "cosine" (lr annealed to 0 over the epochs, as --lr-schedule).
Returns a dict with test_acc_mean, test_acc_std, valid_acc_mean, test_acc (per fold),
folds (per-fold records), epoch_ms_median, seconds, model, folds_source.)doc");
}

}  // namespace edgewise::python
