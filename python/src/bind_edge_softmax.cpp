// Python bindings of edge_softmax and its backward (NumPy or DLPack arrays, CPU or
// CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/edge_softmax.hpp"

namespace edgewise::python {

namespace {

// A new output shaped like `like` (1-D [E] or 2-D [E, H]).
template <class T>
Array output_like(Call& call, const Array& like, const MatrixView<const T>& view) {
  return call.empty<T>(like.ndim() == 1 ? std::vector<int64_t>{view.rows}
                                        : std::vector<int64_t>{view.rows, view.cols});
}

template <class T>
MatrixView<T> as_output(const Array& a, const MatrixView<const T>& like) {
  return {static_cast<T*>(a.data), like.rows, like.cols, a.device};
}

py::object edge_softmax_py(const py::object& offsets_in, const py::object& scores_in, const py::object& stream) {
  constexpr const char* kOp = "edge_softmax";
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array scores = call.array(scores_in, "scores");
  return dispatch_float(scores, kOp, "scores", [&](auto t) -> py::object {
    using T = decltype(t);
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    MatrixView<const T> s = scores.matrix<T>(kOp, "scores");
    Array out = output_like<T>(call, scores, s);
    MatrixView<T> ov = as_output<T>(out, s);
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      edge_softmax<T>(off, s, ov, ctx);
    }
    return call.result(out);
  });
}

py::object edge_softmax_backward_py(const py::object& offsets_in, const py::object& out_in,
                                    const py::object& grad_out_in, const py::object& stream) {
  constexpr const char* kOp = "edge_softmax_backward";
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array out = call.array(out_in, "out");
  Array grad_out = call.array(grad_out_in, "grad_out");
  return dispatch_float(out, kOp, "out", [&](auto t) -> py::object {
    using T = decltype(t);
    require_float<T>(grad_out, kOp, "grad_out");
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    MatrixView<const T> y = out.matrix<T>(kOp, "out");
    MatrixView<const T> g = grad_out.matrix<T>(kOp, "grad_out");
    Array grad_scores = output_like<T>(call, out, y);
    MatrixView<T> gs = as_output<T>(grad_scores, y);
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      edge_softmax_backward<T>(off, y, g, gs, ctx);
    }
    return call.result(grad_scores);
  });
}

}  // namespace

void register_edge_softmax(py::module_& m) {
  m.def("edge_softmax", &edge_softmax_py, py::arg("offsets"), py::arg("scores"),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Softmax of per-edge scores over each destination's incoming edges, per head.

offsets: integer array [S+1], a CSR by destination (offsets[0] == 0, offsets[S] == E,
    nondecreasing); the edges of row v are offsets[v]:offsets[v+1].
scores: float32 or float64 array [E] or [E, H], edges in CSR order.
out[e, h] = exp(s[e, h] - m) / sum over the row's edges of exp(s[., h] - m), m the
row's max: numerically stable, every non-empty row sums to 1 per head.
Returns out, scores' shape and dtype.)doc");
  m.def("edge_softmax_backward", &edge_softmax_backward_py, py::arg("offsets"), py::arg("out"),
        py::arg("grad_out"),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Gradient of edge_softmax: grad_s[e, h] = y[e, h] * (g[e, h] - sum over the row of g y).

offsets: the forward's CSR. out: the forward's output y [E] or [E, H]; grad_out: dL/dy,
same shape and dtype (float32 or float64).
Returns grad_scores, out's shape.)doc");
}

}  // namespace edgewise::python
