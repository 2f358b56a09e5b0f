// The edgewise._edgewise extension module: one registration function per area.
#include <pybind11/pybind11.h>

#include "edgewise/kernels/common/device.hpp"
#include "edgewise/gnn/version.hpp"

namespace py = pybind11;

namespace edgewise::python {
void register_array_interop(py::module_& m);
void register_segment_reduce(py::module_& m);
void register_gather_rows(py::module_& m);
void register_segment_tree(py::module_& m);
void register_sort_by_key(py::module_& m);
void register_run_length_encode(py::module_& m);
void register_offsets_from_keys(py::module_& m);
void register_datasets(py::module_& m);
void register_scatter_reduce(py::module_& m);
void register_scatter_softmax(py::module_& m);
void register_galloping_search(py::module_& m);
void register_engine(py::module_& m);
void register_train(py::module_& m);
void register_spmm(py::module_& m);
void register_reduce_backward(py::module_& m);
void register_samplers(py::module_& m);
void register_loader(py::module_& m);
void register_hetero_sampler(py::module_& m);
void register_dropout(py::module_& m);
void register_sddmm(py::module_& m);
void register_segment_matmul(py::module_& m);
void register_edge_softmax(py::module_& m);
void register_graph_classification(py::module_& m);
void register_reorder(py::module_& m);
}  // namespace edgewise::python

PYBIND11_MODULE(_edgewise, m) {
  m.doc() = "Edgewise: GNN message-passing primitives and engine (C++/CUDA)";
  m.attr("__version__") = edgewise::gnn::version();
  m.def("cuda_built", &edgewise::cuda_built, "True when compiled with the CUDA backend.");
  m.def("cuda_device_count", &edgewise::cuda_device_count,
        "Number of usable CUDA devices (0 without a GPU or driver; never raises).");
  edgewise::python::register_array_interop(m);
  edgewise::python::register_segment_reduce(m);
  edgewise::python::register_gather_rows(m);
  edgewise::python::register_segment_tree(m);
  edgewise::python::register_sort_by_key(m);
  edgewise::python::register_run_length_encode(m);
  edgewise::python::register_offsets_from_keys(m);
  edgewise::python::register_datasets(m);
  edgewise::python::register_scatter_reduce(m);
  edgewise::python::register_scatter_softmax(m);
  edgewise::python::register_galloping_search(m);
  edgewise::python::register_engine(m);
  edgewise::python::register_train(m);
  edgewise::python::register_spmm(m);
  edgewise::python::register_reduce_backward(m);
  edgewise::python::register_samplers(m);
  edgewise::python::register_loader(m);
  edgewise::python::register_hetero_sampler(m);
  edgewise::python::register_dropout(m);
  edgewise::python::register_sddmm(m);
  edgewise::python::register_segment_matmul(m);
  edgewise::python::register_edge_softmax(m);
  edgewise::python::register_graph_classification(m);
  edgewise::python::register_reorder(m);
}
