// Python binding of scatter_reduce.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/kernels/scatter_reduce.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "scatter_reduce";

template <class T, class I>
py::object scatter_reduce_typed(const py::array& values_in, const py::array_t<I, py::array::c_style>& index,
                                int64_t num_segments, ReduceOp op, bool return_arg) {
  auto values = as_contiguous<T>(values_in);
  MatrixView<const T> v = matrix_of(values, kOp, "values");
  VectorView<const I> idx = vector_of(index, kOp, "index");
  EW_REQUIRE(num_segments >= 0, kOp, ": num_segments (", num_segments, ") must be >= 0");
  EW_REQUIRE(!return_arg || has_arg(op), kOp, ": return_arg is only defined for min and max (op is ",
             to_string(op), ")");
  const bool one_d = values.ndim() == 1;
  const int64_t S = num_segments;
  py::array_t<T> out = one_d ? new_array<T>({S}) : new_array<T>({S, v.cols});
  py::array_t<int64_t> arg;
  MatrixView<int64_t> arg_view;
  if (return_arg) {
    arg = one_d ? new_array<int64_t>({S}) : new_array<int64_t>({S, v.cols});
    arg_view = mutable_matrix_of(arg, S, v.cols);
  }
  MatrixView<T> out_view = mutable_matrix_of(out, S, v.cols);
  {
    py::gil_scoped_release release;
    scatter_reduce<T, I>(v, idx, op, out_view, arg_view);
  }
  if (return_arg) return py::make_tuple(out, arg);
  return out;
}

template <class I>
py::object scatter_reduce_index(const py::array& values, const py::array_t<I, py::array::c_style>& index,
                                int64_t num_segments, ReduceOp op, bool return_arg) {
  if (has_dtype<float>(values)) return scatter_reduce_typed<float, I>(values, index, num_segments, op, return_arg);
  if (has_dtype<int32_t>(values)) return scatter_reduce_typed<int32_t, I>(values, index, num_segments, op, return_arg);
  if (has_dtype<uint32_t>(values)) {
    return scatter_reduce_typed<uint32_t, I>(values, index, num_segments, op, return_arg);
  }
  detail::throw_invalid_argument(kOp, ": values must be float32, int32 or uint32 (got ", dtype_name(values), ")");
}

py::object scatter_reduce_py(const py::array& values, const py::array& index, int64_t num_segments,
                             const std::string& op, bool return_arg) {
  const ReduceOp reduce = parse_reduce_op(op);
  // int32 and int64 indices are used as they are (no copy when C-contiguous);
  // any other integer dtype is converted to int64 once.
  if (has_dtype<int32_t>(index)) {
    return scatter_reduce_index<int32_t>(values, as_contiguous<int32_t>(index), num_segments, reduce, return_arg);
  }
  return scatter_reduce_index<int64_t>(values, as_int64(index, kOp, "index"), num_segments, reduce, return_arg);
}

}  // namespace

void register_scatter_reduce(py::module_& m) {
  m.def("scatter_reduce", &scatter_reduce_py, py::arg("values"), py::arg("index"), py::arg("num_segments"),
        py::arg("op") = "sum", py::arg("return_arg") = false,
        R"doc(Reduce each row of values into the output row its index names.

values: float32, int32 or uint32 array [M] or [M, C] (used without a copy when
    C-contiguous). index: integer array [M], any order, every entry in
    [0, num_segments); int32 and int64 are used without a copy, other integer
    dtypes are converted. Row r goes to output index[r].
op: "sum", "mean", "min" or "max". An output no row reaches gives 0 (arg -1).
    int32 sums wrap, integer means truncate.
return_arg: for min/max also return the row of each winner (ties -> lower row,
    NaN beats every number).
Returns out [num_segments] or [num_segments, C] (and arg, int64, same shape).
Float sums are reproducible for a fixed thread count. Bad input raises ValueError.)doc");
}

}  // namespace edgewise::python
