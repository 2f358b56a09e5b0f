// Python bindings of sddmm (dot and additive forms) and edge_gather_sum, their backward
// and the attention aggregation (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include <optional>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/sddmm.hpp"

namespace edgewise::python {

namespace {

template <class T>
MatrixView<T> output_view(const Array& a, int64_t rows, int64_t cols) {
  return {static_cast<T*>(a.data), rows, cols, a.device};
}

// The edge count a CSR's offsets end at (checked again, with the rest, by the kernel).
int64_t edge_count(const VectorView<const int64_t>& offsets, const char* op) {
  EW_REQUIRE(offsets.size >= 1, op, ": offsets must have at least one element (got 0)");
  return offsets.size - 1;
}

py::object sddmm_dot_py(const py::object& offsets_in, const py::object& indices_in, const py::object& x_in,
                        const py::object& y_in, int64_t heads, const py::object& stream) {
  constexpr const char* kOp = "sddmm_dot";
  EW_REQUIRE(heads >= 1, kOp, ": heads must be >= 1 (got ", heads, ")");
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array indices = call.indices(indices_in, "indices");
  Array x = call.array(x_in, "x");
  Array y = call.array(y_in, "y");
  return dispatch_float(x, kOp, "x", [&](auto t) {
    using T = decltype(t);
    require_float<T>(y, kOp, "y");
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    edge_count(off, kOp);
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    MatrixView<const T> yv = y.matrix<T>(kOp, "y");
    return dispatch_index(indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices.vector<I>(kOp, "indices");
      Array out = call.empty<T>({iv.size, heads});
      MatrixView<T> ov = output_view<T>(out, iv.size, heads);
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        sddmm_dot<T, I>(off, iv, xv, yv, ov, ctx);
      }
      return call.result(out);
    });
  });
}

py::object sddmm_add_py(const py::object& offsets_in, const py::object& indices_in, const py::object& a_in,
                        const py::object& b_in, const py::object& stream) {
  constexpr const char* kOp = "sddmm_add";
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array indices = call.indices(indices_in, "indices");
  Array a = call.array(a_in, "a");
  Array b = call.array(b_in, "b");
  return dispatch_float(a, kOp, "a", [&](auto t) {
    using T = decltype(t);
    require_float<T>(b, kOp, "b");
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    edge_count(off, kOp);
    MatrixView<const T> av = a.matrix<T>(kOp, "a");
    MatrixView<const T> bv = b.matrix<T>(kOp, "b");
    return dispatch_index(indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices.vector<I>(kOp, "indices");
      const int64_t H = av.cols;
      Array out = call.empty<T>(a.ndim() == 1 ? std::vector<int64_t>{iv.size} : std::vector<int64_t>{iv.size, H});
      MatrixView<T> ov = output_view<T>(out, iv.size, H);
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        sddmm_add<T, I>(off, iv, av, bv, ov, ctx);
      }
      return call.result(out);
    });
  });
}

py::object edge_gather_sum_py(const py::object& offsets_in, const py::object& w_in, const py::object& indices_in,
                              const py::object& x_in, const py::object& edge_ids_in, const py::object& stream) {
  constexpr const char* kOp = "edge_gather_sum";
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array w = call.array(w_in, "w");
  std::optional<Array> indices;
  if (!indices_in.is_none()) indices = call.indices(indices_in, "indices");
  std::optional<Array> x = call.optional_array(x_in, "x");
  std::optional<Array> edge_ids;
  if (!edge_ids_in.is_none()) edge_ids = call.int64s(edge_ids_in, "edge_ids");
  EW_REQUIRE(!x || indices, kOp, ": indices is required when x is given (it names the rows of x)");
  return dispatch_float(w, kOp, "w", [&](auto t) {
    using T = decltype(t);
    if (x) require_float<T>(*x, kOp, "x");
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    const int64_t R = edge_count(off, kOp);
    MatrixView<const T> wv = w.matrix<T>(kOp, "w");
    MatrixView<const T> xv = x ? x->matrix<T>(kOp, "x") : MatrixView<const T>();
    VectorView<const int64_t> ids = edge_ids ? edge_ids->vector<int64_t>(kOp, "edge_ids") : VectorView<const int64_t>();
    const bool one_d = x ? x->ndim() == 1 : w.ndim() == 1;
    const int64_t cols = x ? xv.cols : wv.cols;
    auto run = [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices ? indices->vector<I>(kOp, "indices") : VectorView<const I>();
      Array out = call.empty<T>(one_d ? std::vector<int64_t>{R} : std::vector<int64_t>{R, cols});
      MatrixView<T> ov = output_view<T>(out, R, cols);
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        edge_gather_sum<T, I>(off, iv, ids, wv, xv, ov, ctx);
      }
      return call.result(out);
    };
    if (indices) return dispatch_index(*indices, run);
    return run(int64_t{});
  });
}

}  // namespace

void register_sddmm(py::module_& m) {
  m.def("sddmm_dot", &sddmm_dot_py, py::arg("offsets"), py::arg("indices"), py::arg("x"), py::arg("y"),
        py::arg("heads") = 1,
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Per-edge, per-head dot products over a CSR graph: out[e, h] = x[src_e, head h] . y[dst_e, head h].

offsets: integer array [S+1] (offsets[0] == 0, offsets[S] == E, nondecreasing); the
    edges of destination row v are offsets[v]:offsets[v+1].
indices: int32 or int64 array [E] (other integer types are converted), the source row
    src_e of each edge, in [0, N).
x: float32 or float64 array [N, H*D]; y: [S, H*D] of x's dtype. Head h of a row is
    its columns h*D:(h+1)*D.
heads: H >= 1 (x's columns must be a multiple of it).
Returns out [E, H] of x's dtype (the edges in CSR order).

Arrays (every sddmm / edge_softmax function): NumPy arrays or any DLPack tensor
(PyTorch, CuPy, ...), all on one device; zero-copy when C-contiguous with the right
dtype; results come back in the caller's framework. stream (keyword): the CUDA
stream to run on instead of the caller's current one (as in spmm). Bad input raises
ValueError naming the argument.)doc");
  m.def("sddmm_add", &sddmm_add_py, py::arg("offsets"), py::arg("indices"), py::arg("a"), py::arg("b"),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Per-edge sums of endpoint values (GAT's attention logits): out[e, h] = a[src_e, h] + b[dst_e, h].

offsets, indices: the CSR as in sddmm_dot. a: float32 or float64 array [N] or [N, H];
b: [S] or [S, H] of a's dtype.
Returns out [E] or [E, H] (a's shape), edges in CSR order.)doc");
  m.def("edge_gather_sum", &edge_gather_sum_py, py::arg("offsets"), py::arg("w"), py::arg("indices") = py::none(),
        py::arg("x") = py::none(), py::arg("edge_ids") = py::none(),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Edge -> node weighted sum: out[v, h*D + d] = sum over k in offsets[v]:offsets[v+1] of w[id_k, h] * x[indices[k], h*D + d].

offsets: [R+1] a CSR (forward, or transposed with edge_ids). w: float32 or float64
[W, H] (or [W], H = 1) per-edge weights. indices: [K] rows of x (required with x).
x: optional [M, H*D] of w's dtype; without it x = 1 and D = 1, so out holds sums of w.
edge_ids: optional int64 [K] indirection into w's rows (id_k = k without it).
Used for attention aggregation (forward CSR, w = alpha, x = values) and for the
backward of sddmm_dot / sddmm_add (transposed CSR with edge_ids).
Returns out [R, H*D] ([R, H] without x; 1-D when the input it mirrors is 1-D).)doc");
}

}  // namespace edgewise::python
