// Python binding of SegmentTree: NumPy arrays (or CPU DLPack tensors) in, NumPy out.
// A CPU tree reads C-contiguous int64 / float32 inputs without copying; a CUDA tree
// copies inputs to the device and results back, explicitly, here at the boundary.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <memory>
#include <string>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/segment_tree.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kUpdate = "SegmentTree.update";
constexpr const char* kSample = "SegmentTree.sample";

// Any real numeric array as float32 (no copy when it already is C-contiguous float32).
py::array_t<float, py::array::c_style> as_float32(const py::array& array, const char* op, const char* name) {
  const char kind = array.dtype().kind();
  EW_REQUIRE(kind == 'f' || kind == 'i' || kind == 'u' || array.size() == 0, op, ": ", name,
             " must be a real numeric array (got dtype ", dtype_name(array), ")");
  return as_contiguous<float>(array);
}

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& host) {
  py::array_t<T> out = new_array<T>({static_cast<py::ssize_t>(host.size())});
  std::copy(host.begin(), host.end(), out.mutable_data());
  return out;
}

void update_py(SegmentTree& tree, const py::object& indices_in, const py::object& priorities_in) {
  auto indices = as_int64(as_numpy(indices_in, kUpdate, "indices"), kUpdate, "indices");
  auto priorities = as_float32(as_numpy(priorities_in, kUpdate, "priorities"), kUpdate, "priorities");
  VectorView<const int64_t> idx = vector_of(indices, kUpdate, "indices");
  VectorView<const float> pri = vector_of(priorities, kUpdate, "priorities");
  if (tree.device().is_cpu()) {
    py::gil_scoped_release release;
    tree.update(idx, pri);
    return;
  }
  // Sizes are checked by update(); copy only what it will read.
  auto d_idx = Buffer<int64_t>::from_host(std::span<const int64_t>(idx.data, static_cast<size_t>(idx.size)),
                                          tree.device());
  auto d_pri = Buffer<float>::from_host(std::span<const float>(pri.data, static_cast<size_t>(pri.size)),
                                        tree.device());
  py::gil_scoped_release release;
  tree.update(d_idx.view(), d_pri.view());
  synchronize(tree.device());
}

py::array_t<int64_t> sample_py(const SegmentTree& tree, int64_t n, uint64_t seed, bool stratified) {
  EW_REQUIRE(n >= 0, kSample, ": n (", n, ") must be >= 0");
  if (tree.device().is_cpu()) {
    py::array_t<int64_t> out = new_array<int64_t>({n});
    VectorView<int64_t> view(out.mutable_data(), n);
    py::gil_scoped_release release;
    tree.sample(view, seed, stratified);
    return out;
  }
  Buffer<int64_t> d_out(n, tree.device());
  std::vector<int64_t> host;
  {
    py::gil_scoped_release release;
    tree.sample(d_out.view(), seed, stratified);
    host = d_out.to_host_vector();
  }
  return to_numpy(host);
}

py::array_t<float> priorities_py(const SegmentTree& tree) {
  if (tree.device().is_cpu()) {
    py::array_t<float> out = new_array<float>({tree.capacity()});
    tree.priorities(VectorView<float>(out.mutable_data(), tree.capacity()));
    return out;
  }
  Buffer<float> out(tree.capacity(), tree.device());
  tree.priorities(out.view());
  return to_numpy(out.to_host_vector());
}

py::array_t<float> nodes_py(const SegmentTree& tree) {
  std::vector<float> host(static_cast<size_t>(tree.nodes().size));
  copy_bytes(host.data(), Device::cpu(), tree.nodes().data, tree.device(), host.size() * sizeof(float));
  return to_numpy(host);
}

}  // namespace

void register_segment_tree(py::module_& m) {
  py::class_<SegmentTree>(m, "SegmentTree", R"doc(Sum tree over float32 priorities for importance-weighted sampling.

SegmentTree(capacity, device="cpu"): `capacity` zero priorities (leaves rounded up
to a power of two; the extra leaves stay 0 and are never drawn). On "cuda" the tree
lives on the GPU and NumPy inputs/outputs are copied explicitly.)doc")
      .def(py::init([](int64_t capacity, const std::string& device) {
             return std::make_unique<SegmentTree>(capacity, Device::parse(device));
           }),
           py::arg("capacity"), py::arg("device") = "cpu")
      .def("update", &update_py, py::arg("indices"), py::arg("priorities"),
           R"doc(Set priorities[k] at leaf indices[k] for every k (a repeated index: the last one wins).

indices: integer array [B], each in [0, capacity). priorities: real array [B]
(converted to float32), finite and >= 0. NumPy arrays or CPU DLPack tensors (read
without a copy when C-contiguous int64 / float32; copied to a CUDA tree); CUDA
tensors are not taken (ValueError naming the argument). Bad input raises
ValueError naming the first bad position and leaves the tree unchanged.)doc")
      .def("sample", &sample_py, py::arg("n"), py::arg("seed"), py::arg("stratified") = false,
           R"doc(Draw n indices (int64 array [n]) with probability priority / total().

Draw i depends only on (tree, seed, i, n, stratified) (counter-based Philox), so
CPU and GPU trees draw the same indices. stratified=True: one draw per equal-mass
slice of the total (the draws come out sorted). Zero-priority leaves are never
drawn. Raises ValueError when n > 0 and total() is 0 (or overflowed to inf).)doc")
      .def("total", py::overload_cast<>(&SegmentTree::total, py::const_), "The sum of all priorities (O(1)).")
      .def("priorities", &priorities_py, "A copy of the capacity priorities (float32 array).")
      .def("nodes", &nodes_py,
           "A copy of the whole tree [2 * leaf_count] (node 1 the root, node p = node 2p + node 2p+1, "
           "leaf i at leaf_count + i).")
      .def_property_readonly("capacity", &SegmentTree::capacity, "The number of priorities (as constructed).")
      .def_property_readonly("leaf_count", &SegmentTree::leaf_count,
                             "Leaves in the tree: capacity rounded up to a power of two.")
      .def_property_readonly(
          "device", [](const SegmentTree& t) { return t.device().str(); },
          "Where the tree lives: \"cpu\" or \"cuda:N\".")
      .def("__len__", &SegmentTree::capacity, "capacity.")
      .def(
          "__repr__",
          [](const SegmentTree& t) {
            return "SegmentTree(capacity=" + std::to_string(t.capacity()) + ", device='" + t.device().str() + "')";
          },
          "SegmentTree(capacity=..., device=...).");
}

}  // namespace edgewise::python
