// Python binding of scatter_softmax (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include <string>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/scatter_softmax.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "scatter_softmax";
using SoftmaxDTypes = DTypes<float, double, Half, BFloat16>;

template <class T, class I>
py::object scatter_softmax_typed(Call& call, const Array& values, const Array& index, int64_t num_segments,
                                 SoftmaxKind kind, double eps, bool transposed) {
  MatrixView<const T> v = values.matrix<T>(kOp, "values");
  VectorView<const I> idx = index.vector<I>(kOp, "index");
  const std::vector<int64_t> shape =
      values.ndim() == 1 ? std::vector<int64_t>{v.rows} : std::vector<int64_t>{v.rows, v.cols};
  Array out = call.empty<T>(shape);
  const MatrixView<T> out_view(static_cast<T*>(out.data), v.rows, v.cols, out.device);
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    if (transposed) {
      scatter_softmax_transposed<T, I>(v, idx, num_segments, kind, eps, out_view, ctx);
    } else {
      scatter_softmax<T, I>(v, idx, num_segments, kind, eps, out_view, ctx);
    }
  }
  return call.result(out);
}

py::object scatter_softmax_py(const py::object& values_in, const py::object& index_in, int64_t num_segments,
                              bool log, double eps, bool transposed, const py::object& stream) {
  EW_REQUIRE(num_segments >= 0, kOp, ": num_segments (", num_segments, ") must be >= 0");
  Call call(kOp);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  Array index = call.indices(index_in, "index");
  EW_REQUIRE(!transposed || values.ndim() == 2, kOp, ": transposed needs 2-D values [C, M]");
  const SoftmaxKind kind = log ? SoftmaxKind::LogSoftmax : SoftmaxKind::Softmax;
  return dispatch_dtype(SoftmaxDTypes{}, values, kOp, "values", [&](auto t) {
    return dispatch_index(index, [&](auto i) {
      return scatter_softmax_typed<decltype(t), decltype(i)>(call, values, index, num_segments, kind, eps,
                                                              transposed);
    });
  });
}

template <class T, class I>
py::object scatter_logsumexp_typed(Call& call, const Array& values, const Array& index, int64_t num_segments,
                                   double eps, bool transposed) {
  MatrixView<const T> v = values.matrix<T>("scatter_logsumexp", "values");
  VectorView<const I> idx = index.vector<I>("scatter_logsumexp", "index");
  const int64_t rows = transposed ? v.rows : num_segments, cols = transposed ? num_segments : v.cols;
  Array out = call.empty<T>(std::vector<int64_t>{rows, cols});
  const MatrixView<T> out_view(static_cast<T*>(out.data), rows, cols, out.device);
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    scatter_logsumexp<T, I>(v, idx, num_segments, eps, out_view, transposed, ctx);
  }
  return call.result(out);
}

py::object scatter_logsumexp_py(const py::object& values_in, const py::object& index_in, int64_t num_segments,
                                double eps, bool transposed, const py::object& stream) {
  constexpr const char* kLse = "scatter_logsumexp";
  EW_REQUIRE(num_segments >= 0, kLse, ": num_segments (", num_segments, ") must be >= 0");
  Call call(kLse);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  Array index = call.indices(index_in, "index");
  EW_REQUIRE(values.ndim() == 2, kLse, ": values must be 2-D");
  return dispatch_dtype(SoftmaxDTypes{}, values, kLse, "values", [&](auto t) {
    return dispatch_index(index, [&](auto i) {
      return scatter_logsumexp_typed<decltype(t), decltype(i)>(call, values, index, num_segments, eps, transposed);
    });
  });
}

}  // namespace

void register_scatter_softmax(py::module_& m) {
  m.def("scatter_softmax", &scatter_softmax_py, py::arg("values"), py::arg("index"), py::arg("num_segments"),
        py::arg("log") = false, py::arg("eps") = 1e-12, py::kw_only(), py::arg("transposed") = false,
        py::arg("stream") = py::none(),
        R"doc(Softmax (log=True: log-softmax) of each column within the groups of rows an index forms.

values: float32, float64, float16 or bfloat16 array [M] or [M, C]. index: integer
    array [M], any order, every entry in [0, num_segments): row r is in group index[r].
Returns out like values: exp(v - m) / z, or with log=True (v - m) - log(z + eps), m the
group's max and z the group's sum of exp(v - m) per column (torch_scatter's
scatter_softmax / scatter_log_softmax). Three passes, no [M, C] temporary; 16-bit
types compute in float and round once.

transposed (keyword): values come as [C, M] (groups along the last dimension), out too.

Arrays: NumPy arrays or any DLPack tensor, all on one device (see scatter_reduce).
stream (keyword): the CUDA stream to run on instead of the caller's current one.
Bad input raises ValueError naming the argument.)doc");
  m.def("scatter_logsumexp", &scatter_logsumexp_py, py::arg("values"), py::arg("index"), py::arg("num_segments"),
        py::arg("eps") = 1e-12, py::kw_only(), py::arg("transposed") = false, py::arg("stream") = py::none(),
        R"doc(log(sum exp(values - m) + eps) + m per index group and column (m: the group's max).

values: float32, float64, float16 or bfloat16 array [M, C] (transposed=True: [C, M]).
index: integer array [M] in [0, num_segments). Returns [num_segments, C] ([C,
num_segments] when transposed): torch_scatter 2.1.2's formula, 0 for an empty or all
-inf group; a NaN value makes its group's column NaN. Bad input raises ValueError.)doc");
}

}  // namespace edgewise::python
