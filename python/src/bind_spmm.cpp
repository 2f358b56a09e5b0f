// Python bindings of spmm and its backward helpers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/kernels/spmm.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

// float32 arrays only (no silent down-casts of float64 features or weights).
py::array_t<float, py::array::c_style> float32_of(const py::array& array, const char* op, const char* name) {
  EW_REQUIRE(has_dtype<float>(array), op, ": ", name, " must be float32 (got ", dtype_name(array), ")");
  return as_contiguous<float>(array);
}

// Calls f with the index array as int32 (when it is int32) or int64 (any other integer
// type, converted once).
template <class F>
py::object with_index_type(const py::array& indices, const char* op, const char* name, F&& f) {
  if (has_dtype<int32_t>(indices)) return f(as_contiguous<int32_t>(indices));
  return f(as_int64(indices, op, name));
}

// An array from any array-like argument (a ValueError naming it otherwise).
py::array array_of(const py::object& object, const char* op, const char* name) {
  py::array array = py::array::ensure(object);
  EW_REQUIRE(static_cast<bool>(array), op, ": ", name, " must be an array");
  return array;
}

// An optional float32 vector argument (None -> absent).
struct OptionalVector {
  py::array_t<float, py::array::c_style> array;
  VectorView<const float> view;
};
OptionalVector optional_float32(const py::object& object, const char* op, const char* name) {
  OptionalVector v;
  if (object.is_none()) return v;
  v.array = float32_of(array_of(object, op, name), op, name);
  v.view = vector_of(v.array, op, name);
  return v;
}

struct OptionalIds {
  py::array_t<int64_t, py::array::c_style> array;
  VectorView<const int64_t> view;
};
OptionalIds optional_int64(const py::object& object, const char* op, const char* name) {
  OptionalIds v;
  if (object.is_none()) return v;
  v.array = as_int64(array_of(object, op, name), op, name);
  v.view = vector_of(v.array, op, name);
  return v;
}

// A new [rows, cols] output, or [rows] when the input it mirrors was 1-D.
template <class T>
py::array_t<T> new_output(bool one_d, int64_t rows, int64_t cols) {
  return one_d ? new_array<T>({rows}) : new_array<T>({rows, cols});
}

py::object spmm_py(const py::array& offsets_in, const py::array& indices, const py::array& x_in,
                   const py::object& weights_in, const std::string& op_name, bool return_arg) {
  constexpr const char* kOp = "spmm";
  const ReduceOp op = parse_reduce_op(op_name);
  EW_REQUIRE(!return_arg || has_arg(op), kOp, ": return_arg is only defined for min and max (op is ", to_string(op),
             ")");
  auto offsets = as_int64(offsets_in, kOp, "offsets");
  auto x = float32_of(x_in, kOp, "x");
  auto weights = optional_float32(weights_in, kOp, "weights");
  VectorView<const int64_t> off = vector_of(offsets, kOp, "offsets");
  MatrixView<const float> xv = matrix_of(x, kOp, "x");
  EW_REQUIRE(off.size >= 1, kOp, ": offsets must have at least one element (got 0)");
  const int64_t S = off.size - 1;
  const bool one_d = x.ndim() == 1;
  return with_index_type(indices, kOp, "indices", [&](auto idx) -> py::object {
    using I = typename decltype(idx)::value_type;
    auto iv = vector_of(idx, kOp, "indices");
    py::array_t<float> out = new_output<float>(one_d, S, xv.cols);
    py::array_t<int64_t> arg;
    MatrixView<int64_t> arg_view;
    if (return_arg) {
      arg = new_output<int64_t>(one_d, S, xv.cols);
      arg_view = mutable_matrix_of(arg, S, xv.cols);
    }
    MatrixView<float> out_view = mutable_matrix_of(out, S, xv.cols);
    {
      py::gil_scoped_release release;
      spmm<float, I>(off, iv, weights.view, xv, op, out_view, arg_view);
    }
    if (return_arg) return py::make_tuple(out, arg);
    return out;
  });
}

py::object spmm_backward_py(const py::array& t_offsets_in, const py::array& t_indices, const py::array& grad_out_in,
                            const py::object& t_edge_ids_in, const py::object& weights_in, const std::string& op_name,
                            const py::object& offsets_in) {
  constexpr const char* kOp = "spmm_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  auto t_offsets = as_int64(t_offsets_in, kOp, "t_offsets");
  auto grad_out = float32_of(grad_out_in, kOp, "grad_out");
  auto t_edge_ids = optional_int64(t_edge_ids_in, kOp, "t_edge_ids");
  auto weights = optional_float32(weights_in, kOp, "weights");
  auto offsets = optional_int64(offsets_in, kOp, "offsets");
  VectorView<const int64_t> t_off = vector_of(t_offsets, kOp, "t_offsets");
  MatrixView<const float> g = matrix_of(grad_out, kOp, "grad_out");
  EW_REQUIRE(t_off.size >= 1, kOp, ": t_offsets must have at least one element (got 0)");
  const int64_t N = t_off.size - 1;
  return with_index_type(t_indices, kOp, "t_indices", [&](auto idx) -> py::object {
    using I = typename decltype(idx)::value_type;
    auto iv = vector_of(idx, kOp, "t_indices");
    py::array_t<float> grad_x = new_output<float>(grad_out.ndim() == 1, N, g.cols);
    MatrixView<float> gx = mutable_matrix_of(grad_x, N, g.cols);
    {
      py::gil_scoped_release release;
      spmm_backward<float, I>(t_off, iv, t_edge_ids.view, weights.view, g, op, offsets.view, gx,
                              default_context(Device::cpu()));
    }
    return grad_x;
  });
}

py::object spmm_arg_backward_py(const py::array& t_offsets_in, const py::array& t_indices,
                                const py::array& t_edge_ids_in, const py::array& grad_out_in,
                                const py::array& arg_in, const py::object& weights_in) {
  constexpr const char* kOp = "spmm_arg_backward";
  auto t_offsets = as_int64(t_offsets_in, kOp, "t_offsets");
  auto t_edge_ids = as_int64(t_edge_ids_in, kOp, "t_edge_ids");
  auto grad_out = float32_of(grad_out_in, kOp, "grad_out");
  auto arg = as_int64(arg_in, kOp, "arg");
  auto weights = optional_float32(weights_in, kOp, "weights");
  VectorView<const int64_t> t_off = vector_of(t_offsets, kOp, "t_offsets");
  MatrixView<const float> g = matrix_of(grad_out, kOp, "grad_out");
  MatrixView<const int64_t> a = matrix_of(arg, kOp, "arg");
  EW_REQUIRE(t_off.size >= 1, kOp, ": t_offsets must have at least one element (got 0)");
  const int64_t N = t_off.size - 1;
  return with_index_type(t_indices, kOp, "t_indices", [&](auto idx) -> py::object {
    using I = typename decltype(idx)::value_type;
    auto iv = vector_of(idx, kOp, "t_indices");
    py::array_t<float> grad_x = new_output<float>(grad_out.ndim() == 1, N, g.cols);
    MatrixView<float> gx = mutable_matrix_of(grad_x, N, g.cols);
    {
      py::gil_scoped_release release;
      spmm_arg_backward<float, I>(t_off, iv, vector_of(t_edge_ids, kOp, "t_edge_ids"), weights.view, g, a, gx,
                                  default_context(Device::cpu()));
    }
    return grad_x;
  });
}

py::object spmm_weight_backward_py(const py::array& offsets_in, const py::array& indices, const py::array& x_in,
                                   const py::array& grad_out_in, const std::string& op_name,
                                   const py::object& arg_in) {
  constexpr const char* kOp = "spmm_weight_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  auto offsets = as_int64(offsets_in, kOp, "offsets");
  auto x = float32_of(x_in, kOp, "x");
  auto grad_out = float32_of(grad_out_in, kOp, "grad_out");
  py::array_t<int64_t, py::array::c_style> arg;
  MatrixView<const int64_t> arg_view;
  if (!arg_in.is_none()) {
    arg = as_int64(array_of(arg_in, kOp, "arg"), kOp, "arg");
    arg_view = matrix_of(arg, kOp, "arg");
  }
  VectorView<const int64_t> off = vector_of(offsets, kOp, "offsets");
  MatrixView<const float> xv = matrix_of(x, kOp, "x");
  MatrixView<const float> g = matrix_of(grad_out, kOp, "grad_out");
  return with_index_type(indices, kOp, "indices", [&](auto idx) -> py::object {
    using I = typename decltype(idx)::value_type;
    auto iv = vector_of(idx, kOp, "indices");
    py::array_t<float> grad_w = new_array<float>({iv.size});
    VectorView<float> gw(grad_w.mutable_data(), iv.size);
    {
      py::gil_scoped_release release;
      spmm_weight_backward<float, I>(off, iv, xv, g, op, arg_view, gw, default_context(Device::cpu()));
    }
    return grad_w;
  });
}

}  // namespace

void register_spmm(py::module_& m) {
  m.def("spmm", &spmm_py, py::arg("offsets"), py::arg("indices"), py::arg("x"), py::arg("weights") = py::none(),
        py::arg("op") = "sum", py::arg("return_arg") = false,
        R"doc(Fused gather-reduce over a CSR graph: out[v] = op over edges e of row v of w_e * x[indices[e]].

offsets: integer array [S+1] (offsets[0] == 0, offsets[S] == E, nondecreasing); the
    edges of destination row v are offsets[v]:offsets[v+1].
indices: int32 or int64 array [E] (other integer types are converted), the source row
    of each edge, in [0, N).
x: float32 array [N] or [N, C] (used without a copy when C-contiguous).
weights: optional float32 array [E] of edge weights (default: all 1).
op: "sum", "mean" (weighted sum / edge count), "min" or "max". An empty row gives 0.
return_arg: for min/max also return arg, the edge position e of each winner (ties ->
    lower e; -1 for an empty row).
The [E, C] message matrix is never built. With (offsets, indices, weights) a CSR
sparse matrix [S, N], op "sum" is the sparse x dense product.
Returns out [S] or [S, C] (and arg, int64, same shape). Bad input raises ValueError.)doc");
  m.def("spmm_backward", &spmm_backward_py, py::arg("t_offsets"), py::arg("t_indices"), py::arg("grad_out"),
        py::arg("t_edge_ids") = py::none(), py::arg("weights") = py::none(), py::arg("op") = "sum",
        py::arg("offsets") = py::none(),
        R"doc(Gradient of spmm (sum or mean) w.r.t. x, as a gather over the transposed CSR.

t_offsets [N+1], t_indices [E] (the destination row of each edge, grouped by source),
t_edge_ids [E] (the forward CSR position of each; needed with weights in forward order),
grad_out [S] or [S, C] float32, weights [E] (forward order; transposed order when
t_edge_ids is None), op "sum" or "mean" (mean needs the forward offsets [S+1]).
Returns grad_x [N] or [N, C].)doc");
  m.def("spmm_arg_backward", &spmm_arg_backward_py, py::arg("t_offsets"), py::arg("t_indices"),
        py::arg("t_edge_ids"), py::arg("grad_out"), py::arg("arg"), py::arg("weights") = py::none(),
        R"doc(Gradient of spmm min/max w.r.t. x, routed through the forward's arg.

grad_x[u, c] = sum of w_e * grad_out[v, c] over the edges e (source u, destination v)
with arg[v, c] == e. Arguments as in spmm_backward; arg is spmm's arg [S] or [S, C].
Returns grad_x [N] or [N, C].)doc");
  m.def("spmm_weight_backward", &spmm_weight_backward_py, py::arg("offsets"), py::arg("indices"), py::arg("x"),
        py::arg("grad_out"), py::arg("op") = "sum", py::arg("arg") = py::none(),
        R"doc(Gradient of spmm w.r.t. the edge weights: grad_w[e] = sum_c grad_out[v, c] * x[indices[e], c].

mean divides by the row's edge count; min/max (arg required) count only the columns
whose winner is e. Returns grad_w [E] float32 in CSR order.)doc");
}

}  // namespace edgewise::python
