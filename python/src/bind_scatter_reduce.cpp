// Python binding of scatter_reduce (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "reduce_outputs.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "scatter_reduce";

template <class T, class I>
py::object scatter_reduce_typed(Call& call, const Array& values, const Array& index, int64_t num_segments,
                                ReduceOp op, bool return_arg, bool transposed) {
  MatrixView<const T> v = values.matrix<T>(kOp, "values");
  VectorView<const I> idx = index.vector<I>(kOp, "index");
  const bool one_d = values.ndim() == 1;
  EW_REQUIRE(!transposed || !one_d, kOp, ": transposed needs 2-D values [C, M]");
  const ReduceOutputs<T> outputs = transposed ? ReduceOutputs<T>(call, false, v.rows, num_segments, return_arg)
                                              : ReduceOutputs<T>(call, one_d, num_segments, v.cols, return_arg);
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    if (transposed) {
      scatter_reduce_transposed<T, I>(v, idx, op, outputs.out_view, outputs.arg_view, ctx);
    } else {
      scatter_reduce<T, I>(v, idx, op, outputs.out_view, outputs.arg_view, ctx);
    }
  }
  return outputs.result(call);
}

py::object scatter_reduce_py(const py::object& values_in, const py::object& index_in, int64_t num_segments,
                             const std::string& op, bool return_arg, bool transposed, const py::object& stream) {
  const ReduceOp reduce = parse_reduce_op(op);
  EW_REQUIRE(num_segments >= 0, kOp, ": num_segments (", num_segments, ") must be >= 0");
  EW_REQUIRE(!return_arg || has_arg(reduce), kOp, ": return_arg is only defined for min and max (op is ",
             to_string(reduce), ")");
  Call call(kOp);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  // int32 and int64 indices are used as they are; other integer dtypes (NumPy/CPU)
  // are converted to int64 once.
  Array index = call.indices(index_in, "index");
  return dispatch_dtype(ReduceDTypes{}, values, kOp, "values", [&](auto t) {
    return dispatch_index(index, [&](auto i) {
      return scatter_reduce_typed<decltype(t), decltype(i)>(call, values, index, num_segments, reduce, return_arg,
                                                             transposed);
    });
  });
}

}  // namespace

void register_scatter_reduce(py::module_& m) {
  m.def("scatter_reduce", &scatter_reduce_py, py::arg("values"), py::arg("index"), py::arg("num_segments"),
        py::arg("op") = "sum", py::arg("return_arg") = false,
        py::kw_only(), py::arg("transposed") = false, py::arg("stream") = py::none(),
        R"doc(Reduce each row of values into the output row its index names.

values: float32, float64, float16, bfloat16, int32, int64 or uint32 array [M] or
    [M, C] (float16 / bfloat16 accumulate in float32 and round once; bfloat16 comes
    as a DLPack tensor, e.g. torch, since NumPy has no bfloat16). index: integer array
    [M], any order, every entry in [0, num_segments); int32 and int64 are used as
    they are, other integer dtypes (NumPy/CPU) are converted. Row r goes to output
    index[r].
op: "sum", "mean", "min" or "max". An output no row reaches gives 0 (arg -1).
    int32 sums wrap, integer means round toward -inf (floor).
return_arg: for min/max also return the row of each winner (ties -> lower row,
    NaN beats every number).
Returns out [num_segments] or [num_segments, C] of values' dtype (and arg, int64,
same shape). Float sums are reproducible on CPU for a fixed thread count (CUDA:
atomics, the last bits may vary).

Arrays: NumPy arrays or any DLPack tensor (PyTorch, CuPy, ...), all on one device;
zero-copy when C-contiguous with the right dtype (CUDA inputs must be), CUDA runs on
the caller's current stream, results come back in the caller's framework.
transposed (keyword): values come as [C, M] (column c of the problem in row c, e.g.
    reducing the last dimension of a row-major tensor) and out / arg as [C,
    num_segments]; the values are read once, not copied transposed first.
stream (keyword): the CUDA stream to run on instead of the caller's current one (see spmm).
Bad input raises ValueError naming the argument.)doc");
}

}  // namespace edgewise::python
