// Python binding of the node orderings (gnn/reorder.hpp): node_ordering() returns the
// permutation so callers can relabel their own arrays (benchmarks, other libraries).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>

#include "edgewise/gnn/graph/reorder.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

py::array_t<int64_t> node_ordering_py(int64_t num_nodes, const py::array& src, const py::array& dst,
                                      const std::string& ordering) {
  auto s = as_int64(src, "node_ordering", "src");
  auto d = as_int64(dst, "node_ordering", "dst");
  EW_REQUIRE(s.ndim() == 1 && d.ndim() == 1, "node_ordering: src and dst must be 1-D");
  const gnn::Ordering o = gnn::parse_ordering(ordering);
  gnn::NodePermutation p;
  {
    py::gil_scoped_release release;
    p = gnn::node_ordering(num_nodes, std::span<const int64_t>(s.data(), static_cast<size_t>(s.size())),
                           std::span<const int64_t>(d.data(), static_cast<size_t>(d.size())), o);
  }
  py::array_t<int64_t> out = new_array<int64_t>({static_cast<py::ssize_t>(p.new_to_old.size())});
  std::copy(p.new_to_old.begin(), p.new_to_old.end(), out.mutable_data());
  return out;
}

}  // namespace

void register_reorder(py::module_& m) {
  m.def("node_ordering", &node_ordering_py, py::arg("num_nodes"), py::arg("src"), py::arg("dst"),
        py::arg("ordering") = "rcm",
        R"doc(A locality ordering of the graph with edges src[e] -> dst[e]: "none", "degree"
(descending in-degree) or "rcm" (reverse Cuthill-McKee on the symmetrised graph).

Returns new_to_old, int64 [num_nodes]: new node i is old node new_to_old[i]. Relabel
with old_to_new = argsort(new_to_old): edges (old_to_new[src], old_to_new[dst]), features
x[new_to_old]; results in the new order go back with y_new[old_to_new]. Raises ValueError
for ids outside [0, num_nodes) or an unknown ordering.)doc");
}

}  // namespace edgewise::python
