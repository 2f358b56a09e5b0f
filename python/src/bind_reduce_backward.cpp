// Python bindings of segment_reduce_backward and scatter_reduce_backward (NumPy or
// DLPack arrays, CPU or CUDA; array_interop.hpp): the gradient of every op.
#include <pybind11/pybind11.h>

#include <optional>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/reduce_backward.hpp"

namespace edgewise::python {

namespace {

// Reads values / out / arg / grad_out, allocates grad_values like values, dispatches
// on values' dtype (float32 / float64) and calls
// run(T{}, values, out, arg, grad_out, grad_values, ctx) without the GIL.
template <class Run>
py::object run_backward(Call& call, const char* op, const py::object& values_in, const py::object& out_in,
                        const py::object& arg_in, const py::object& grad_out_in, Run&& run) {
  Array values = call.array(values_in, "values");
  Array out = call.array(out_in, "out");
  Array grad_out = call.array(grad_out_in, "grad_out");
  std::optional<Array> arg;
  if (!arg_in.is_none()) arg = call.int64s(arg_in, "arg");
  return dispatch_float(values, op, "values", [&](auto t) -> py::object {
    using T = decltype(t);
    require_float<T>(out, op, "out");
    require_float<T>(grad_out, op, "grad_out");
    MatrixView<const T> v = values.matrix<T>(op, "values");
    MatrixView<const int64_t> arg_view = arg ? arg->matrix<int64_t>(op, "arg") : MatrixView<const int64_t>();
    Array grad = call.empty<T>(values.shape);
    MatrixView<T> gv(static_cast<T*>(grad.data), v.rows, v.cols, grad.device);
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      run(t, v, out.matrix<T>(op, "out"), arg_view, grad_out.matrix<T>(op, "grad_out"), gv, ctx);
    }
    return call.result(grad);
  });
}

py::object segment_reduce_backward_py(const py::object& values, const py::object& offsets_in,
                                      const std::string& op_name, const py::object& out, const py::object& arg,
                                      const py::object& grad_out, const std::string& tie_rule_name,
                                      const py::object& stream) {
  constexpr const char* kOp = "segment_reduce_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  const TieRule tie_rule = parse_tie_rule(tie_rule_name);
  Call call(kOp);
  call.use_stream(stream);
  Array offsets = call.int64s(offsets_in, "offsets");
  return run_backward(call, kOp, values, out, arg, grad_out,
                      [&](auto t, auto v, auto o, auto a, auto g, auto gv, Context& ctx) {
                        segment_reduce_backward<decltype(t)>(v, offsets.vector<int64_t>(kOp, "offsets"), op, o, a, g,
                                                             gv, ctx, tie_rule);
                      });
}

py::object scatter_reduce_backward_py(const py::object& values, const py::object& index_in,
                                      const std::string& op_name, const py::object& out, const py::object& arg,
                                      const py::object& grad_out, const std::string& tie_rule_name,
                                      const py::object& stream) {
  constexpr const char* kOp = "scatter_reduce_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  const TieRule tie_rule = parse_tie_rule(tie_rule_name);
  Call call(kOp);
  call.use_stream(stream);
  Array index = call.int64s(index_in, "index");
  return run_backward(call, kOp, values, out, arg, grad_out,
                      [&](auto t, auto v, auto o, auto a, auto g, auto gv, Context& ctx) {
                        scatter_reduce_backward<decltype(t), int64_t>(v, index.vector<int64_t>(kOp, "index"), op, o,
                                                                      a, g, gv, ctx, tie_rule);
                      });
}

}  // namespace

void register_reduce_backward(py::module_& m) {
  m.def("segment_reduce_backward", &segment_reduce_backward_py, py::arg("values"), py::arg("offsets"), py::arg("op"),
        py::arg("out"), py::arg("arg"), py::arg("grad_out"), py::kw_only(), py::arg("tie_rule") = "first",
        py::arg("stream") = py::none(),
        R"doc(Gradient of segment_reduce for every op: grad_values [M] or [M, C].

values, offsets, op: the forward's arguments; out: its output; arg: its arg (min/max
with tie_rule "first"; else None); grad_out: dL/d out. Rules: sum 1, mean 1/count,
mul out/value, var 2 (v - mean)/count, std (v - mean)/(count out) (0 where masked);
min/max by tie_rule: "first" (default) all to the arg row (torch_scatter's
scatter_max), "split" 1/k to each of the k rows equal to out (NaN ties with NaN;
arg unused), "split_zero_base" as split but 1/(k+1) where out is 0 (torch's
scatter_reduce amax/amin with include_self=False onto zeros: PyG's rule).
stream: as for segment_reduce.)doc");
  m.def("scatter_reduce_backward", &scatter_reduce_backward_py, py::arg("values"), py::arg("index"), py::arg("op"),
        py::arg("out"), py::arg("arg"), py::arg("grad_out"), py::kw_only(), py::arg("tie_rule") = "first",
        py::arg("stream") = py::none(),
        R"doc(Gradient of scatter_reduce for every op: grad_values [M] or [M, C].

Arguments (tie_rule too) as in segment_reduce_backward, with the forward's index [M]
instead of offsets.)doc");
}

}  // namespace edgewise::python
