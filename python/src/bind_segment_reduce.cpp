// Python binding of segment_reduce (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "reduce_outputs.hpp"
#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "segment_reduce";

template <class T>
py::object segment_reduce_typed(Call& call, const Array& values, const Array& offsets, ReduceOp op,
                                bool return_arg) {
  MatrixView<const T> v = values.matrix<T>(kOp, "values");
  VectorView<const int64_t> off = offsets.vector<int64_t>(kOp, "offsets");
  EW_REQUIRE(off.size >= 1, kOp, ": offsets must have at least one element (got 0)");
  const ReduceOutputs<T> outputs(call, values.ndim() == 1, off.size - 1, v.cols, return_arg);
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    segment_reduce<T>(v, off, op, outputs.out_view, outputs.arg_view, ctx);
  }
  return outputs.result(call);
}

py::object segment_reduce_py(const py::object& values_in, const py::object& offsets_in, const std::string& op,
                             bool return_arg, const py::object& stream) {
  const ReduceOp reduce = parse_reduce_op(op);
  EW_REQUIRE(!return_arg || has_arg(reduce), kOp, ": return_arg is only defined for min and max (op is ",
             to_string(reduce), ")");
  Call call(kOp);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  Array offsets = call.int64s(offsets_in, "offsets");
  return dispatch_dtype(ReduceDTypes{}, values, kOp, "values", [&](auto t) {
    return segment_reduce_typed<decltype(t)>(call, values, offsets, reduce, return_arg);
  });
}

}  // namespace

void register_segment_reduce(py::module_& m) {
  m.def(
      "reduce_ops",
      [] {
        std::vector<std::string> names;
        for (ReduceOp op : kAllReduceOps) names.emplace_back(to_string(op));
        return names;
      },
      R"doc(The names of the reductions segment_reduce, scatter_reduce and spmm accept
(one list in the library; each also has an alias, e.g. "add" for "sum").)doc");
  m.def("segment_reduce", &segment_reduce_py, py::arg("values"), py::arg("offsets"), py::arg("op") = "sum",
        py::arg("return_arg") = false,
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Reduce the rows of each offset-delimited segment.

values: float32, float64, float16, bfloat16, int32, int64 or uint32 array [M] or
    [M, C] (float16 / bfloat16 accumulate in float32 and round once; bfloat16 comes
    as a DLPack tensor, e.g. torch, since NumPy has no bfloat16). offsets: integer
    array [S+1], offsets[0] == 0, offsets[S] == M, nondecreasing; segment s is rows
    offsets[s]:offsets[s+1].
op: a name of reduce_ops(): "sum", "mean", "min", "max", ... An empty segment gives
    the op's empty value (0 for sum/mean/min/max; arg -1). Float sums
    accumulate in the input's precision in a fixed order (bitwise reproducible).
return_arg: for min/max also return the row of each winner (ties -> lower row).
Returns out [S] or [S, C] of values' dtype (and arg, int64, same shape).

Arrays: NumPy arrays or any DLPack tensor (PyTorch, CuPy, ...), all on one device.
C-contiguous inputs of the right dtype are used without a copy; other NumPy/CPU
inputs are converted once (offsets of another integer type become int64); CUDA
inputs must already be C-contiguous with the right dtype, and run on the caller's
current stream. Results come back in the caller's framework (torch in -> torch
out, NumPy in -> NumPy out), wrapping our buffer without a copy.
stream (keyword): the CUDA stream to run on instead of the caller's current one (see spmm).
Bad input raises ValueError naming the argument.)doc");
}

}  // namespace edgewise::python
