// The edgewise._edgewise extension module: one registration function per area.
#include <pybind11/pybind11.h>

#include "edgewise/kernels/common/device.hpp"
#include "edgewise/gnn/version.hpp"

namespace py = pybind11;

namespace edgewise::python {
void register_segment_reduce(py::module_& m);
void register_spmm(py::module_& m);
}  // namespace edgewise::python

PYBIND11_MODULE(_edgewise, m) {
  m.doc() = "Edgewise: GNN message-passing primitives and engine (C++/CUDA)";
  m.attr("__version__") = edgewise::gnn::version();
  m.def("cuda_built", &edgewise::cuda_built, "True when compiled with the CUDA backend.");
  m.def("cuda_device_count", &edgewise::cuda_device_count,
        "Number of usable CUDA devices (0 without a GPU or driver; never raises).");
  edgewise::python::register_segment_reduce(m);
  edgewise::python::register_spmm(m);
}
