// Python binding of segment_reduce.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/kernels/segment_reduce.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "segment_reduce";

template <class T>
py::object segment_reduce_typed(const py::array& values_in, const py::array_t<int64_t, py::array::c_style>& offsets,
                                ReduceOp op, bool return_arg) {
  auto values = as_contiguous<T>(values_in);
  MatrixView<const T> v = matrix_of(values, kOp, "values");
  VectorView<const int64_t> off = vector_of(offsets, kOp, "offsets");
  EW_REQUIRE(off.size >= 1, kOp, ": offsets must have at least one element (got 0)");
  const int64_t S = off.size - 1;
  const bool one_d = values.ndim() == 1;
  py::array_t<T> out = one_d ? new_array<T>({S}) : new_array<T>({S, v.cols});
  py::array_t<int64_t> arg;
  MatrixView<int64_t> arg_view;
  EW_REQUIRE(!return_arg || has_arg(op), kOp, ": return_arg is only defined for min and max (op is ",
             to_string(op), ")");
  if (return_arg) {
    arg = one_d ? new_array<int64_t>({S}) : new_array<int64_t>({S, v.cols});
    arg_view = mutable_matrix_of(arg, S, v.cols);
  }
  MatrixView<T> out_view = mutable_matrix_of(out, S, v.cols);
  {
    py::gil_scoped_release release;
    segment_reduce<T>(v, off, op, out_view, arg_view);
  }
  if (return_arg) return py::make_tuple(out, arg);
  return out;
}

py::object segment_reduce_py(const py::array& values, const py::array& offsets, const std::string& op,
                             bool return_arg) {
  const ReduceOp reduce = parse_reduce_op(op);
  auto off = as_int64(offsets, kOp, "offsets");
  if (has_dtype<float>(values)) return segment_reduce_typed<float>(values, off, reduce, return_arg);
  if (has_dtype<int32_t>(values)) return segment_reduce_typed<int32_t>(values, off, reduce, return_arg);
  if (has_dtype<uint32_t>(values)) return segment_reduce_typed<uint32_t>(values, off, reduce, return_arg);
  detail::throw_invalid_argument(kOp, ": values must be float32, int32 or uint32 (got ", dtype_name(values), ")");
}

}  // namespace

void register_segment_reduce(py::module_& m) {
  m.def("segment_reduce", &segment_reduce_py, py::arg("values"), py::arg("offsets"), py::arg("op") = "sum",
        py::arg("return_arg") = false,
        R"doc(Reduce the rows of each offset-delimited segment.

values: float32, int32 or uint32 array [M] or [M, C] (used without a copy when
    C-contiguous). offsets: integer array [S+1], offsets[0] == 0, offsets[S] == M,
    nondecreasing; segment s is rows offsets[s]:offsets[s+1].
op: "sum", "mean", "min" or "max". An empty segment gives 0 (arg -1).
return_arg: for min/max also return the row of each winner (ties -> lower row).
Returns out [S] or [S, C] (and arg, int64, same shape). Bad input raises ValueError.)doc");
}

}  // namespace edgewise::python
