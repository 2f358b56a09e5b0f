// Python bindings of spmm and its backward helpers (NumPy or DLPack arrays, CPU or
// CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "reduce_outputs.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::python {

namespace {

template <class T>
VectorView<const T> optional_vector(const std::optional<Array>& array, const char* op, const char* name) {
  if (!array) return {};
  require_float<T>(*array, op, name);
  return array->vector<T>(op, name);
}

VectorView<const int64_t> optional_ids(const std::optional<Array>& array, const char* op, const char* name) {
  return array ? array->vector<int64_t>(op, name) : VectorView<const int64_t>();
}

py::object spmm_py(const py::object& offsets_in, const py::object& indices_in, const py::object& x_in,
                   const py::object& weights_in, const std::string& op_name, bool return_arg,
                   const py::object& stream) {
  constexpr const char* kOp = "spmm";
  const ReduceOp op = parse_reduce_op(op_name);
  EW_REQUIRE(!return_arg || has_arg(op), kOp, ": return_arg is only defined for min and max (op is ", to_string(op),
             ")");
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array indices = call.indices(indices_in, "indices");
  Array x = call.array(x_in, "x");
  std::optional<Array> weights = call.optional_array(weights_in, "weights");
  return dispatch_float(x, kOp, "x", [&](auto t) {
    using T = decltype(t);
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    VectorView<const T> w = optional_vector<T>(weights, kOp, "weights");
    EW_REQUIRE(off.size >= 1, kOp, ": offsets must have at least one element (got 0)");
    const int64_t S = off.size - 1;
    return dispatch_index(indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices.vector<I>(kOp, "indices");
      const ReduceOutputs<T> outputs(call, x.ndim() == 1, S, xv.cols, return_arg);
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        spmm<T, I>(off, iv, w, xv, op, outputs.out_view, outputs.arg_view, ctx);
      }
      return outputs.result(call);
    });
  });
}

py::object spmm_backward_py(const py::object& t_offsets_in, const py::object& t_indices_in,
                            const py::object& grad_out_in, const py::object& t_edge_ids_in,
                            const py::object& weights_in, const std::string& op_name, const py::object& offsets_in,
                            const py::object& stream) {
  constexpr const char* kOp = "spmm_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  Call call(kOp);
  call.use_stream(stream);
  Array t_offsets = call.int64s(t_offsets_in, "t_offsets");
  Array t_indices = call.indices(t_indices_in, "t_indices");
  Array grad_out = call.array(grad_out_in, "grad_out");
  std::optional<Array> t_edge_ids;
  if (!t_edge_ids_in.is_none()) t_edge_ids = call.int64s(t_edge_ids_in, "t_edge_ids");
  std::optional<Array> weights = call.optional_array(weights_in, "weights");
  std::optional<Array> offsets;
  if (!offsets_in.is_none()) offsets = call.int64s(offsets_in, "offsets");
  return dispatch_float(grad_out, kOp, "grad_out", [&](auto t) {
    using T = decltype(t);
    VectorView<const int64_t> t_off = t_offsets.vector<int64_t>(kOp, "t_offsets");
    MatrixView<const T> g = grad_out.matrix<T>(kOp, "grad_out");
    VectorView<const T> w = optional_vector<T>(weights, kOp, "weights");
    EW_REQUIRE(t_off.size >= 1, kOp, ": t_offsets must have at least one element (got 0)");
    const int64_t N = t_off.size - 1;
    return dispatch_index(t_indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = t_indices.vector<I>(kOp, "t_indices");
      const ReduceOutputs<T> grad_x(call, grad_out.ndim() == 1, N, g.cols, /*return_arg=*/false);
      const MatrixView<T> gx = grad_x.out_view;
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        spmm_backward<T, I>(t_off, iv, optional_ids(t_edge_ids, kOp, "t_edge_ids"), w, g, op,
                            optional_ids(offsets, kOp, "offsets"), gx, ctx);
      }
      return grad_x.result(call);
    });
  });
}

py::object spmm_arg_backward_py(const py::object& t_offsets_in, const py::object& t_indices_in,
                                const py::object& t_edge_ids_in, const py::object& grad_out_in,
                                const py::object& arg_in, const py::object& weights_in, const py::object& stream) {
  constexpr const char* kOp = "spmm_arg_backward";
  Call call(kOp);
  call.use_stream(stream);
  Array t_offsets = call.int64s(t_offsets_in, "t_offsets");
  Array t_indices = call.indices(t_indices_in, "t_indices");
  Array t_edge_ids = call.int64s(t_edge_ids_in, "t_edge_ids");
  Array grad_out = call.array(grad_out_in, "grad_out");
  Array arg = call.int64s(arg_in, "arg");
  std::optional<Array> weights = call.optional_array(weights_in, "weights");
  return dispatch_float(grad_out, kOp, "grad_out", [&](auto t) {
    using T = decltype(t);
    VectorView<const int64_t> t_off = t_offsets.vector<int64_t>(kOp, "t_offsets");
    MatrixView<const T> g = grad_out.matrix<T>(kOp, "grad_out");
    MatrixView<const int64_t> a = arg.matrix<int64_t>(kOp, "arg");
    VectorView<const T> w = optional_vector<T>(weights, kOp, "weights");
    EW_REQUIRE(t_off.size >= 1, kOp, ": t_offsets must have at least one element (got 0)");
    const int64_t N = t_off.size - 1;
    return dispatch_index(t_indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = t_indices.vector<I>(kOp, "t_indices");
      const ReduceOutputs<T> grad_x(call, grad_out.ndim() == 1, N, g.cols, /*return_arg=*/false);
      const MatrixView<T> gx = grad_x.out_view;
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        spmm_arg_backward<T, I>(t_off, iv, t_edge_ids.vector<int64_t>(kOp, "t_edge_ids"), w, g, a, gx, ctx);
      }
      return grad_x.result(call);
    });
  });
}

py::object spmm_weight_backward_py(const py::object& offsets_in, const py::object& indices_in,
                                   const py::object& x_in, const py::object& grad_out_in,
                                   const std::string& op_name, const py::object& arg_in, const py::object& stream) {
  constexpr const char* kOp = "spmm_weight_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array indices = call.indices(indices_in, "indices");
  Array x = call.array(x_in, "x");
  Array grad_out = call.array(grad_out_in, "grad_out");
  std::optional<Array> arg;
  if (!arg_in.is_none()) arg = call.int64s(arg_in, "arg");
  return dispatch_float(x, kOp, "x", [&](auto t) {
    using T = decltype(t);
    require_float<T>(grad_out, kOp, "grad_out");
    VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    MatrixView<const T> g = grad_out.matrix<T>(kOp, "grad_out");
    MatrixView<const int64_t> arg_view = arg ? arg->matrix<int64_t>(kOp, "arg") : MatrixView<const int64_t>();
    return dispatch_index(indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices.vector<I>(kOp, "indices");
      Array grad_w = call.empty<T>({iv.size});
      VectorView<T> gw(static_cast<T*>(grad_w.data), iv.size, grad_w.device);
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        spmm_weight_backward<T, I>(off, iv, xv, g, op, arg_view, gw, ctx);
      }
      return call.result(grad_w);
    });
  });
}

py::object spmm_full_backward_py(const py::object& offsets_in, const py::object& indices_in, const py::object& x_in,
                                 const py::object& weights_in, const std::string& op_name, const py::object& out_in,
                                 const py::object& arg_in, const py::object& grad_out_in,
                                 const py::object& t_offsets_in, const py::object& t_edge_ids_in, bool weight_grad,
                                 const std::string& tie_rule_name, const py::object& stream) {
  constexpr const char* kOp = "spmm_full_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  const TieRule tie_rule = parse_tie_rule(tie_rule_name);
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  Array indices = call.indices(indices_in, "indices");
  Array x = call.array(x_in, "x");
  std::optional<Array> weights = call.optional_array(weights_in, "weights");
  Array out = call.array(out_in, "out");
  std::optional<Array> arg;
  if (!arg_in.is_none()) arg = call.int64s(arg_in, "arg");
  Array grad_out = call.array(grad_out_in, "grad_out");
  Array t_offsets = call.int64s(t_offsets_in, "t_offsets");
  Array t_edge_ids = call.int64s(t_edge_ids_in, "t_edge_ids");
  return dispatch_float(x, kOp, "x", [&](auto t) {
    using T = decltype(t);
    require_float<T>(grad_out, kOp, "grad_out");
    require_float<T>(out, kOp, "out");
    MatrixView<const T> xv = x.matrix<T>(kOp, "x");
    MatrixView<const T> g = grad_out.matrix<T>(kOp, "grad_out");
    MatrixView<const T> o = out.matrix<T>(kOp, "out");
    VectorView<const T> w = optional_vector<T>(weights, kOp, "weights");
    MatrixView<const int64_t> arg_view = arg ? arg->matrix<int64_t>(kOp, "arg") : MatrixView<const int64_t>();
    return dispatch_index(indices, [&](auto i) -> py::object {
      using I = decltype(i);
      VectorView<const I> iv = indices.vector<I>(kOp, "indices");
      const ReduceOutputs<T> grad_x(call, x.ndim() == 1, xv.rows, xv.cols, /*return_arg=*/false);
      std::optional<Array> grad_w;
      VectorView<T> gw;
      if (weight_grad) {
        grad_w = call.empty<T>({iv.size});
        gw = VectorView<T>(static_cast<T*>(grad_w->data), iv.size, grad_w->device);
      }
      Context& ctx = call.context();
      {
        py::gil_scoped_release release;
        spmm_full_backward<T, I>(offsets.vector<int64_t>(kOp, "offsets"), iv, w, xv, op, o, arg_view, g,
                                 t_offsets.vector<int64_t>(kOp, "t_offsets"),
                                 t_edge_ids.vector<int64_t>(kOp, "t_edge_ids"), grad_x.out_view, gw, ctx, tie_rule);
      }
      if (weight_grad) return py::make_tuple(grad_x.result(call), call.result(*grad_w));
      return py::make_tuple(grad_x.result(call), py::none());
    });
  });
}

}  // namespace

void register_spmm(py::module_& m) {
  m.def("spmm", &spmm_py, py::arg("offsets"), py::arg("indices"), py::arg("x"), py::arg("weights") = py::none(),
        py::arg("op") = "sum", py::arg("return_arg") = false,
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Fused gather-reduce over a CSR graph: out[v] = op over edges e of row v of w_e * x[indices[e]].

offsets: integer array [S+1] (offsets[0] == 0, offsets[S] == E, nondecreasing); the
    edges of destination row v are offsets[v]:offsets[v+1].
indices: int32 or int64 array [E] (other integer types are converted), the source row
    of each edge, in [0, N).
x: float32 or float64 array [N] or [N, C].
weights: optional array [E] of edge weights, x's dtype (default: all 1).
op: "sum", "mean" (weighted sum / edge count), "min" or "max". An empty row gives 0.
return_arg: for min/max also return arg, the edge position e of each winner (ties ->
    lower e; -1 for an empty row).
The [E, C] message matrix is never built. With (offsets, indices, weights) a CSR
sparse matrix [S, N], op "sum" is the sparse x dense product.
Returns out [S] or [S, C] of x's dtype (and arg, int64, same shape).

Arrays (every spmm function): NumPy arrays or any DLPack tensor (PyTorch, CuPy, ...),
all on one device; zero-copy when C-contiguous with the right dtype (CUDA inputs
must be; NumPy/CPU inputs are otherwise converted once); CUDA runs on the caller's
current stream; results come back in the caller's framework (torch in -> torch out).
stream (keyword, every spmm function): the CUDA stream to run on instead: an int in
the DLPack convention (0 or 1: the legacy default stream, 2: the per-thread default
stream, larger: a cudaStream_t) or a stream object (torch.cuda.Stream,
cupy.cuda.Stream). The inputs are requested on it (__dlpack__(stream=...)), so their
producers' pending work is ordered before the op. None (default): the caller's
current stream. CPU arrays take no stream (ValueError).
Bad input raises ValueError naming the argument.)doc");
  m.def("spmm_backward", &spmm_backward_py, py::arg("t_offsets"), py::arg("t_indices"), py::arg("grad_out"),
        py::arg("t_edge_ids") = py::none(), py::arg("weights") = py::none(), py::arg("op") = "sum",
        py::arg("offsets") = py::none(),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Gradient of spmm (sum or mean) w.r.t. x, as a gather over the transposed CSR.

t_offsets [N+1], t_indices [E] (the destination row of each edge, grouped by source),
t_edge_ids [E] (the forward CSR position of each; needed with weights in forward order),
grad_out [S] or [S, C] float32 or float64 (weights: the same dtype), weights [E] (forward order; transposed order when
t_edge_ids is None), op "sum" or "mean" (mean needs the forward offsets [S+1]).
Returns grad_x [N] or [N, C].)doc");
  m.def("spmm_arg_backward", &spmm_arg_backward_py, py::arg("t_offsets"), py::arg("t_indices"),
        py::arg("t_edge_ids"), py::arg("grad_out"), py::arg("arg"), py::arg("weights") = py::none(),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Gradient of spmm min/max w.r.t. x, routed through the forward's arg.

grad_x[u, c] = sum of w_e * grad_out[v, c] over the edges e (source u, destination v)
with arg[v, c] == e. Arguments as in spmm_backward; arg is spmm's arg [S] or [S, C].
Returns grad_x [N] or [N, C].)doc");
  m.def("spmm_weight_backward", &spmm_weight_backward_py, py::arg("offsets"), py::arg("indices"), py::arg("x"),
        py::arg("grad_out"), py::arg("op") = "sum", py::arg("arg") = py::none(),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Gradient of spmm w.r.t. the edge weights: grad_w[e] = sum_c grad_out[v, c] * x[indices[e], c].

mean divides by the row's edge count; min/max (arg required) count only the columns
whose winner is e. x and grad_out: float32 or float64 (one dtype).
Returns grad_w [E] of that dtype in CSR order.)doc");
  m.def("spmm_full_backward", &spmm_full_backward_py, py::arg("offsets"), py::arg("indices"), py::arg("x"),
        py::arg("weights"), py::arg("op"), py::arg("out"), py::arg("arg"), py::arg("grad_out"), py::arg("t_offsets"),
        py::arg("t_edge_ids"), py::arg("weight_grad") = false, py::kw_only(), py::arg("tie_rule") = "first",
        py::arg("stream") = py::none(),
        R"doc(Gradient of spmm for every op (mul, var and std included) from the forward.

offsets, indices, x, weights (or None), op: the forward's arguments; out: its output;
arg: its arg (min/max with tie_rule "first"; else None); grad_out: dL/d out;
t_offsets [N+1] and t_edge_ids [E]: the transposed CSR. tie_rule (min/max): "first"
all of an output's gradient to its arg edge, "split" 1/k to each of the k messages
equal to the output, "split_zero_base" 1/(k+1) where the output is 0 (torch's
scatter_reduce amax onto zeros, i.e. PyG's max aggregation).
Returns (grad_x [N, C], grad_w [E] or None when weight_grad is false). stream: as for
spmm.)doc");
}

}  // namespace edgewise::python
