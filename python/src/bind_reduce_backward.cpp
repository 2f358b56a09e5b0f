// Python bindings of segment_reduce_backward and scatter_reduce_backward (NumPy or
// DLPack arrays, CPU or CUDA; array_interop.hpp): the gradient of every op.
#include <pybind11/pybind11.h>

#include <optional>

#include "array_interop.hpp"
#include "edgewise/kernels/reduce_backward.hpp"

namespace edgewise::python {

namespace {

// The arrays of one backward call; values fixes the dtype (float32 or float64).
struct BackwardArgs {
  Array values, out, grad_out;
  std::optional<Array> arg;
};

template <class T, class Run>
py::object run_backward(Call& call, const char* op, BackwardArgs& a, Run&& run) {
  for (auto [array, name] : {std::pair{&a.out, "out"}, std::pair{&a.grad_out, "grad_out"}}) {
    EW_REQUIRE(array->template is<T>(), op, ": ", name, " must be ", sizeof(T) == 8 ? "float64" : "float32",
               " like values (got ", array->dtype_str(), ")");
  }
  MatrixView<const T> v = a.values.matrix<T>(op, "values");
  MatrixView<const int64_t> arg_view = a.arg ? a.arg->matrix<int64_t>(op, "arg") : MatrixView<const int64_t>();
  Array grad = call.empty<T>(a.values.shape);
  MatrixView<T> gv(static_cast<T*>(grad.data), v.rows, v.cols, grad.device);
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    run(v, a.out.matrix<T>(op, "out"), arg_view, a.grad_out.matrix<T>(op, "grad_out"), gv, ctx);
  }
  return call.result(grad);
}

template <class Run>
py::object with_float(Call& call, const char* op, BackwardArgs& a, Run&& run) {
  if (a.values.is<float>()) return run_backward<float>(call, op, a, [&](auto&&... x) { run(float{}, x...); });
  if (a.values.is<double>()) return run_backward<double>(call, op, a, [&](auto&&... x) { run(double{}, x...); });
  detail::throw_invalid_argument(op, ": values must be float32 or float64 (got ", a.values.dtype_str(), ")");
}

BackwardArgs read_args(Call& call, const py::object& values, const py::object& out, const py::object& arg,
                       const py::object& grad_out) {
  BackwardArgs a{call.array(values, "values"), call.array(out, "out"), call.array(grad_out, "grad_out"), {}};
  if (!arg.is_none()) a.arg = call.int64s(arg, "arg");
  return a;
}

py::object segment_reduce_backward_py(const py::object& values_in, const py::object& offsets_in,
                                      const std::string& op_name, const py::object& out_in, const py::object& arg_in,
                                      const py::object& grad_out_in) {
  constexpr const char* kOp = "segment_reduce_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  Call call(kOp);
  BackwardArgs a = read_args(call, values_in, out_in, arg_in, grad_out_in);
  Array offsets = call.int64s(offsets_in, "offsets");
  return with_float(call, kOp, a, [&](auto t, auto v, auto o, auto arg, auto g, auto gv, Context& ctx) {
    using T = decltype(t);
    segment_reduce_backward<T>(v, offsets.vector<int64_t>(kOp, "offsets"), op, o, arg, g, gv, ctx);
  });
}

py::object scatter_reduce_backward_py(const py::object& values_in, const py::object& index_in,
                                      const std::string& op_name, const py::object& out_in, const py::object& arg_in,
                                      const py::object& grad_out_in) {
  constexpr const char* kOp = "scatter_reduce_backward";
  const ReduceOp op = parse_reduce_op(op_name);
  Call call(kOp);
  BackwardArgs a = read_args(call, values_in, out_in, arg_in, grad_out_in);
  Array index = call.int64s(index_in, "index");
  return with_float(call, kOp, a, [&](auto t, auto v, auto o, auto arg, auto g, auto gv, Context& ctx) {
    using T = decltype(t);
    scatter_reduce_backward<T, int64_t>(v, index.vector<int64_t>(kOp, "index"), op, o, arg, g, gv, ctx);
  });
}

}  // namespace

void register_reduce_backward(py::module_& m) {
  m.def("segment_reduce_backward", &segment_reduce_backward_py, py::arg("values"), py::arg("offsets"), py::arg("op"),
        py::arg("out"), py::arg("arg"), py::arg("grad_out"),
        R"doc(Gradient of segment_reduce for every op: grad_values [M] or [M, C].

values, offsets, op: the forward's arguments; out: its output; arg: its arg (min/max;
else None); grad_out: dL/d out. Rules: sum 1, mean 1/count, min/max the arg row,
mul out/value, var 2 (v - mean)/count, std (v - mean)/(count out) (0 where masked).)doc");
  m.def("scatter_reduce_backward", &scatter_reduce_backward_py, py::arg("values"), py::arg("index"), py::arg("op"),
        py::arg("out"), py::arg("arg"), py::arg("grad_out"),
        R"doc(Gradient of scatter_reduce for every op: grad_values [M] or [M, C].

Arguments as in segment_reduce_backward, with the forward's index [M] instead of offsets.)doc");
}

}  // namespace edgewise::python
