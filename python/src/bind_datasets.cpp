// Python bindings of the datasets: read_npz, load_dataset, planted_partition,
// rmat_graph, default_data_dir and the DataFileError exception.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/npz.hpp"
#include "edgewise/gnn/data/synthetic.hpp"

namespace edgewise::python {

namespace py = pybind11;
using namespace edgewise::gnn;

namespace {

// A NumPy array that owns `v` (moved, not copied) through a capsule.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v, std::vector<py::ssize_t> shape) {
  if (v.empty()) return py::array_t<T>(shape);
  auto* heap = new std::vector<T>(std::move(v));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, heap->data(), owner);
}

py::array npy_to_numpy(NpyArray&& a) {
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  // Explicit C strides: the bundled pybind11 may read a NumPy 2 dtype's itemsize wrongly.
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = a.dtype.itemsize;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::dtype dtype(a.dtype.str());
  if (a.data.empty()) return py::array(dtype, shape, strides);
  auto* heap = new std::vector<std::byte>(std::move(a.data));
  py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<std::byte>*>(p); });
  return py::array(dtype, shape, strides, heap->data(), owner);
}

py::dict dataset_to_dict(Dataset&& d) {
  py::dict out;
  const auto N = static_cast<py::ssize_t>(d.num_nodes);
  const auto E = static_cast<py::ssize_t>(d.num_edges());
  const auto F = static_cast<py::ssize_t>(d.features.cols);
  out["name"] = d.name;
  out["note"] = d.note;
  out["num_nodes"] = d.num_nodes;
  out["num_classes"] = d.num_classes;
  out["edge_index"] = to_numpy(std::move(d.edge_index), {2, E});
  if (d.features.is_sparse()) {
    CsrMatrix& m = d.features.csr;
    const auto nnz = static_cast<py::ssize_t>(m.nnz());
    out["features"] = py::make_tuple(to_numpy(std::move(m.offsets), {N + 1}), to_numpy(std::move(m.indices), {nnz}),
                                     to_numpy(std::move(m.values), {nnz}), py::make_tuple(N, F));
  } else {
    out["features"] = to_numpy(std::move(d.features.dense), {N, F});
  }
  out["feature_format"] = to_string(d.features.format);
  out["labels"] = to_numpy(std::move(d.labels), {static_cast<py::ssize_t>(d.labels.size())});
  for (auto [key, list] : {std::pair{"train_idx", &d.train_idx}, std::pair{"valid_idx", &d.valid_idx},
                           std::pair{"test_idx", &d.test_idx}})
    out[key] = to_numpy(std::move(*list), {static_cast<py::ssize_t>(list->size())});
  if (!d.edge_weight.empty()) out["edge_weight"] = to_numpy(std::move(d.edge_weight), {E});
  if (d.edge_feat_dim > 0) {  // E was taken before edge_index was moved out
    out["edge_feat"] = to_numpy(std::move(d.edge_feat), {E, static_cast<py::ssize_t>(d.edge_feat_dim)});
  }
  return out;
}

py::dict read_npz_py(const std::string& path) {
  std::vector<std::pair<std::string, NpyArray>> arrays;
  {
    py::gil_scoped_release release;
    NpzArchive archive = NpzArchive::open(path);
    for (const std::string& key : archive.keys()) arrays.emplace_back(key, archive.read(key));
  }
  py::dict out;
  for (auto& [key, array] : arrays) out[py::str(key)] = npy_to_numpy(std::move(array));
  return out;
}

py::dict load_dataset_py(const std::string& name_or_path, const std::string& features, double sparse_threshold,
                         std::optional<bool> symmetrize, std::optional<bool> remove_self_loops, int64_t max_nodes) {
  LoadOptions options;
  options.features = parse_feature_format(features);
  options.sparse_threshold = sparse_threshold;
  options.symmetrize = symmetrize;
  options.remove_self_loops = remove_self_loops;
  options.max_nodes = max_nodes;
  Dataset d;
  {
    py::gil_scoped_release release;
    d = load_dataset(name_or_path, options);
  }
  return dataset_to_dict(std::move(d));
}

py::dict planted_partition_py(int64_t num_nodes, int64_t num_classes, double average_degree, double homophily,
                              int64_t num_features, double feature_density, double feature_signal,
                              int64_t train_per_class, int64_t num_valid, int64_t num_test, const std::string& features,
                              uint64_t seed) {
  PlantedPartitionParams p;
  p.num_nodes = num_nodes;
  p.num_classes = num_classes;
  p.average_degree = average_degree;
  p.homophily = homophily;
  p.num_features = num_features;
  p.feature_density = feature_density;
  p.feature_signal = feature_signal;
  p.train_per_class = train_per_class;
  p.num_valid = num_valid;
  p.num_test = num_test;
  p.features = parse_feature_format(features);
  Dataset d;
  {
    py::gil_scoped_release release;
    d = planted_partition(p, seed);
  }
  return dataset_to_dict(std::move(d));
}

py::dict rmat_graph_py(int64_t num_nodes, int64_t num_edges, double a, double b, double c, uint64_t seed,
                       bool remove_self_loops, bool symmetrize, bool deduplicate, bool scramble_ids,
                       int64_t num_features, int64_t num_classes, double train_fraction, double valid_fraction) {
  RmatOptions o;
  o.remove_self_loops = remove_self_loops;
  o.symmetrize = symmetrize;
  o.deduplicate = deduplicate;
  o.scramble_ids = scramble_ids;
  o.num_features = num_features;
  o.num_classes = num_classes;
  o.train_fraction = train_fraction;
  o.valid_fraction = valid_fraction;
  Dataset d;
  {
    py::gil_scoped_release release;
    d = rmat_graph(num_nodes, num_edges, a, b, c, seed, o);
  }
  return dataset_to_dict(std::move(d));
}

constexpr const char* kDatasetDoc = R"doc(
Returns a dict: name (str), num_nodes, num_classes (int), edge_index (int64
[2, E]: row 0 sources, row 1 destinations), features (float32 [N, F] when dense,
else a CSR tuple (offsets int64 [N+1], indices int32 [nnz], values float32 [nnz],
(N, F))), feature_format ("dense" or "sparse"), labels (int64 [N], empty when
there are none), train_idx / valid_idx / test_idx (int64, ascending), and
edge_feat (float32 [E, D], row e for edge_index column e) when the data has edge
features, and edge_weight (float32 [E]) when it has edge weights (an edge list's
third column). The arrays own the loaded memory (no copy is made).)doc";

}  // namespace

void register_datasets(py::module_& m) {
  auto& data_file_error = py::register_exception<DataFileError>(m, "DataFileError", PyExc_ValueError);
  data_file_error.attr("__doc__") =
      "A dataset or .npz file is missing, truncated, corrupt or inconsistent (a ValueError); the message "
      "names the file, the entry and the problem.";

  m.def("read_npz", &read_npz_py, py::arg("path"),
        R"doc(Read every array of an .npz archive (stored or deflated entries, zip64, NPY v1-3).

Returns {key: ndarray} in archive order with the stored dtype (bool, int8..int64,
uint8..uint64, float32, float64; little-endian) and shape, in C order (Fortran-order
arrays are transposed on read). Every entry's CRC-32 is checked. A missing,
truncated or corrupt file, an unsupported dtype or compression method raises
edgewise.DataFileError (a ValueError) naming the file, the entry and the problem.)doc");

  m.def("default_data_dir", [] { return default_data_dir().string(); },
        "The folder datasets are looked up in by name: $EDGEWISE_DATA_DIR, else "
        "$XDG_CACHE_HOME/edgewise/datasets, else ~/.cache/edgewise/datasets.");

  m.def("load_dataset", &load_dataset_py, py::arg("name_or_path"), py::arg("features") = "auto",
        py::arg("sparse_threshold") = 0.1, py::arg("symmetrize") = py::none(),
        py::arg("remove_self_loops") = py::none(), py::arg("max_nodes") = kMaxNodes,
        (std::string(R"doc(Load a node-classification dataset: the OGB npz layout, gnn-benchmark or
scipy.sparse .npz files, OGB raw folders or edge lists (picked by what the path holds).

name_or_path: a path, or a name ("cora", "citeseer", "amazon_photo",
    "coauthor_cs"; case-insensitive) looked up as <default_data_dir()>/<name>.npz.
features: "auto" (CSR when the feature density <= sparse_threshold, else dense),
    "dense" or "sparse". Sparse features are built while inflating, without a dense copy.
symmetrize, remove_self_loops: None keeps the format's convention (gnn-benchmark
    files are made undirected without self loops, as Shchur et al.'s loader and
    PyG do; every other format is kept as stored); True / False override it.
    Symmetrising merges duplicate edges; the note says what was done.
max_nodes: the most nodes a file may make (at most 2^31 - 1), checked before
    anything is sized by a node count or id.
Raises edgewise.DataFileError (a ValueError) when the dataset is missing (saying where
it looked and how to set EDGEWISE_DATA_DIR), corrupt or inconsistent.)doc") + kDatasetDoc).c_str());

  m.def("planted_partition", &planted_partition_py, py::arg("num_nodes") = 2708, py::arg("num_classes") = 7,
        py::arg("average_degree") = 4.0, py::arg("homophily") = 0.7, py::arg("num_features") = 1433,
        py::arg("feature_density") = 0.0127, py::arg("feature_signal") = 0.35, py::arg("train_per_class") = 20,
        py::arg("num_valid") = 500, py::arg("num_test") = 1000, py::arg("features") = "sparse",
        py::arg("seed") = 0,
        (std::string(R"doc(The built-in synthetic dataset: a planted partition (stochastic block model).

Classes drawn uniformly; edges independently with within/across-class probabilities
giving the expected average_degree and edge homophily; undirected (both directions),
no self loops or duplicates, sorted. Features: binary bag of words, ~feature_density * F
words per node, each from its class's topic with probability feature_signal. Split:
train_per_class per class, then num_valid, num_test (planetoid style). Deterministic for
a seed, whatever the thread count.)doc") + kDatasetDoc).c_str());

  m.def("rmat_graph", &rmat_graph_py, py::arg("num_nodes"), py::arg("num_edges"), py::arg("a") = 0.57,
        py::arg("b") = 0.19, py::arg("c") = 0.19, py::arg("seed") = 0, py::arg("remove_self_loops") = true,
        py::arg("symmetrize") = false, py::arg("deduplicate") = true, py::arg("scramble_ids") = true,
        py::arg("num_features") = 0, py::arg("num_classes") = 0, py::arg("train_fraction") = 0.6,
        py::arg("valid_fraction") = 0.2,
        (std::string(R"doc(An R-MAT power-law graph (quadrant probabilities a, b, c, d = 1 - a - b - c).

num_edges draws; then ids scrambled (scramble_ids), self loops removed, edges
symmetrised, sorted, deduplicated as asked. num_features > 0 adds uniform [-1, 1)
dense features; num_classes > 0 adds random labels and a train/valid/test split.
Parallel and deterministic for a seed, whatever the thread count.)doc") + kDatasetDoc).c_str());
}

}  // namespace edgewise::python
