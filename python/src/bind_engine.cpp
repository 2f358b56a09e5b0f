// Python binding of the engine's graph: Graph (CSR from an edge list, aggregation on
// NumPy features). Training: bind_train.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/graph/graph.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

using gnn::Graph;

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
  py::array_t<T> out = new_array<T>({static_cast<py::ssize_t>(v.size())});
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

Graph graph_from_edge_index(const py::object& edge_index, int64_t num_nodes, const py::object& edge_weight) {
  auto ei = as_int64(as_numpy(edge_index, "Graph", "edge_index"), "Graph", "edge_index");
  EW_REQUIRE(ei.ndim() == 2 && ei.shape(0) == 2, "Graph: edge_index must be [2, E] (got ndim ", ei.ndim(), ")");
  const int64_t E = ei.shape(1);
  VectorView<const int64_t> src(ei.data(), E), dst(ei.data() + E, E);
  py::array_t<float, py::array::c_style> w;
  VectorView<const float> wv;
  if (!edge_weight.is_none()) {
    w = as_contiguous<float>(as_numpy(edge_weight, "Graph", "edge_weight"));
    wv = VectorView<const float>(w.data(), static_cast<int64_t>(w.size()));
  }
  py::gil_scoped_release release;
  return Graph::from_coo(src, dst, num_nodes, wv);
}

py::object aggregate_py(const Graph& graph, const py::object& x_obj, const std::string& op,
                        const std::string& strategy) {
  Call call("aggregate");  // torch in -> torch out (CPU)
  auto x = as_contiguous<float>(call.numpy(x_obj, "x"));
  MatrixView<const float> xv = matrix_of(x, "aggregate", "x");
  gnn::AggregationOptions o;
  o.op = parse_reduce_op(op);
  o.strategy = gnn::parse_strategy(strategy);
  gnn::Tensor xt = gnn::Tensor::from_host(std::span<const float>(xv.data, static_cast<size_t>(xv.size())), xv.rows,
                                          xv.cols);
  gnn::Tensor out;
  {
    py::gil_scoped_release release;
    gnn::NoGradGuard no_grad;
    out = gnn::aggregate(graph, gnn::Variable(xt), o).value();
  }
  py::array_t<float> result = x.ndim() == 1 ? new_array<float>({out.rows()}) : new_array<float>({out.rows(), out.cols()});
  std::copy(out.data(), out.data() + out.numel(), result.mutable_data());
  return call.result(std::move(result));
}

// Graph.find_edges: 1-D integer arrays in, int64 CSR positions (or -1) out.
py::array_t<int64_t> find_edges_py(const Graph& graph, const py::object& src_obj, const py::object& dst_obj) {
  auto src = as_int64(as_numpy(src_obj, "find_edges", "src"), "find_edges", "src");
  auto dst = as_int64(as_numpy(dst_obj, "find_edges", "dst"), "find_edges", "dst");
  const VectorView<const int64_t> s = vector_of(src, "find_edges", "src");
  const VectorView<const int64_t> d = vector_of(dst, "find_edges", "dst");
  std::vector<int64_t> ids;
  {
    py::gil_scoped_release release;
    ids = graph.find_edges(std::span<const int64_t>(s.data, static_cast<size_t>(s.size)),
                           std::span<const int64_t>(d.data, static_cast<size_t>(d.size)));
  }
  return to_numpy(ids);
}

// Edge features [E, D] (or [E]: D = 1) in edge_index order -> the graph carrying them.
Graph with_edge_attr_py(const Graph& graph, const py::object& edge_attr) {
  auto a = as_contiguous<float>(as_numpy(edge_attr, "Graph.with_edge_attr", "edge_attr"));
  EW_REQUIRE(a.ndim() == 1 || a.ndim() == 2, "Graph.with_edge_attr: edge_attr must be [E] or [E, D] (got ndim ",
             a.ndim(), ")");
  const int64_t rows = a.ndim() >= 1 ? a.shape(0) : 0, cols = a.ndim() == 2 ? a.shape(1) : 1;
  gnn::Tensor t = gnn::Tensor::from_host(std::span<const float>(a.data(), static_cast<size_t>(a.size())), rows, cols);
  py::gil_scoped_release release;
  return graph.with_edge_attr(t);
}

py::object edge_attr_py(const Graph& graph) {
  if (!graph.has_edge_attr()) return py::none();
  const gnn::Tensor host = graph.edge_attr().to(Device::cpu());
  py::array_t<float> out = new_array<float>({host.rows(), host.cols()});
  std::copy(host.data(), host.data() + host.numel(), out.mutable_data());
  return out;
}

}  // namespace

void register_engine(py::module_& m) {
  py::class_<Graph>(m, "Graph", R"doc(A directed graph in CSR form by destination, built from an edge list.

Graph(edge_index, num_nodes, edge_weight=None): edge_index [2, E] integer (row 0 =
source, row 1 = destination), ids in [0, num_nodes); edge_weight [E] float32.
Bad input raises ValueError naming the argument and position.)doc")
      .def(py::init(&graph_from_edge_index), py::arg("edge_index"), py::arg("num_nodes"),
           py::arg("edge_weight") = py::none())
      .def_property_readonly("num_nodes", &Graph::num_nodes, "Number of nodes N (ids 0 .. N-1).")
      .def_property_readonly("num_edges", &Graph::num_edges, "Number of edges E (duplicates counted).")
      .def("offsets", [](const Graph& g) { return to_numpy(g.offsets().to_host_vector()); },
           "CSR offsets [N+1]: the edges into node v are positions offsets[v]:offsets[v+1].")
      .def("sources", [](const Graph& g) { return to_numpy(g.sources().to_host_vector()); },
           "Source node of each CSR edge [E] (int32).")
      .def("edge_ids", [](const Graph& g) { return to_numpy(g.edge_ids().to_host_vector()); },
           "Input position of each CSR edge [E] (the sort permutation).")
      .def(
          "transposed",
          [](const Graph& g) {
            const gnn::TransposedCsr& t = g.transposed();
            return py::make_tuple(to_numpy(t.offsets.to_host_vector()), to_numpy(t.destinations.to_host_vector()),
                                  to_numpy(t.edge_ids.to_host_vector()));
          },
          "The CSR by source (offsets [N+1], destinations [E] int32, and edge_ids [E]: the CSR position "
          "(order of sources()) of each transposed edge), built on first use.")
      .def("in_degree", [](const Graph& g) { return to_numpy(g.in_degree().to_host_vector()); },
           "Number of edges into each node [N] (int64).")
      .def("find_edges", &find_edges_py, py::arg("src"), py::arg("dst"),
           R"doc(Edge lookup: for each i, the CSR position (the order of sources() and edge_ids()) of an
edge src[i] -> dst[i], or -1 when there is none; the smallest position among duplicates.
src, dst: 1-D integer arrays of equal length, ids in [0, num_nodes) (ValueError naming
the argument and position otherwise). Returns int64 [len(src)]. Queries are sorted by
source and answered by galloping search in the sorted out-neighbour lists.)doc")
      .def("gcn_normalized", [](const Graph& g) { return g.gcn_normalized(); },
           "D^-1/2 (A + I) D^-1/2 as a weighted graph (PyG's gcn_norm).")
      .def("with_edge_attr", &with_edge_attr_py, py::arg("edge_attr"),
           "This graph carrying edge features edge_attr [E, D] (or [E]) float32, given in edge_index order; "
           "they are kept in CSR order (row k belongs to CSR edge k). Non-finite values raise ValueError.")
      .def("edge_attr", &edge_attr_py,
           "The edge features [E, D] float32 in CSR order (row k: the edge sources()[k] -> its destination), "
           "or None when the graph has none.")
      .def("aggregate", &aggregate_py, py::arg("x"), py::arg("op") = "sum", py::arg("strategy") = "auto",
           "out[v] = op over edges u -> v of w_e * x[u] for x [N] or [N, C] float32.");
}

}  // namespace edgewise::python
