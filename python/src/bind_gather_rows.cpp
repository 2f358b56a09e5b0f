// Python binding of gather_rows_csr / gather_rows_coo (NumPy or DLPack arrays, CPU or
// CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include <vector>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/gather_rows.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kCsr = "gather_rows_csr";
constexpr const char* kCoo = "gather_rows_coo";

// An index-like argument [n] or [rows, n] as a matrix; 1-D is one row (shared by every batch).
template <class I>
MatrixView<const I> rows_of(const Array& a, const char* op, const char* name) {
  MatrixView<const I> m = a.matrix<I>(op, name);
  if (a.ndim() == 1) return {m.data, 1, m.rows, m.device};
  return m;
}

// The output [batches * rows] or [batches * rows, C], with values' number of dimensions.
template <class T>
Array output(Call& call, const Array& values, int64_t rows, int64_t cols) {
  return values.ndim() == 1 ? call.empty<T>({rows}) : call.empty<T>({rows, cols});
}

py::object gather_rows_csr_py(const py::object& values_in, const py::object& offsets_in, int64_t rows,
                              int64_t batches, const py::object& stream) {
  EW_REQUIRE(rows >= 0, kCsr, ": rows (", rows, ") must be >= 0");
  EW_REQUIRE(batches >= 0, kCsr, ": batches (", batches, ") must be >= 0");
  Call call(kCsr);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  Array offsets = call.int64s(offsets_in, "offsets");
  return dispatch_dtype(ReduceDTypes{}, values, kCsr, "values", [&](auto t) {
    using T = decltype(t);
    const MatrixView<const T> v = values.matrix<T>(kCsr, "values");
    const MatrixView<const int64_t> off = rows_of<int64_t>(offsets, kCsr, "offsets");
    const Array out = output<T>(call, values, batches * rows, v.cols);
    MatrixView<T> out_view{static_cast<T*>(out.data), batches * rows, v.cols, out.device};
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      gather_rows_csr<T>(v, off, out_view, batches, ctx);
    }
    return call.result(out);
  });
}

py::object gather_rows_coo_py(const py::object& values_in, const py::object& index_in, int64_t batches,
                              const py::object& stream) {
  EW_REQUIRE(batches >= 0, kCoo, ": batches (", batches, ") must be >= 0");
  Call call(kCoo);
  call.use_stream(stream);
  Array values = call.array(values_in, "values");
  Array index = call.indices(index_in, "index");
  return dispatch_dtype(ReduceDTypes{}, values, kCoo, "values", [&](auto t) {
    using T = decltype(t);
    return dispatch_index(index, [&](auto i) {
      using I = decltype(i);
      const MatrixView<const T> v = values.matrix<T>(kCoo, "values");
      const MatrixView<const I> idx = rows_of<I>(index, kCoo, "index");
      const Array out = output<T>(call, values, batches * idx.cols, v.cols);
      MatrixView<T> out_view{static_cast<T*>(out.data), batches * idx.cols, v.cols, out.device};
      Context& ctx = call.context();
      {
        const FreshOutputs fresh(ctx);
        py::gil_scoped_release release;
        gather_rows_coo<T, I>(v, idx, out_view, batches, ctx);
      }
      return call.result(out);
    });
  });
}

}  // namespace

void register_gather_rows(py::module_& m) {
  m.def("gather_rows_csr", &gather_rows_csr_py, py::arg("values"), py::arg("offsets"), py::arg("rows"),
        py::kw_only(), py::arg("batches") = 1, py::arg("stream") = py::none(),
        R"doc(Spread each segment's row over the output rows offsets assign it (torch_scatter's gather_csr).

values: [A * S] or [A * S, C] array of any reduction dtype (float32, float64, float16,
    bfloat16, int32, int64, uint32), A = batches. offsets: integer array [S + 1] (shared
    by every batch) or [A, S + 1], each row nondecreasing within [0, rows].
Returns out [A * rows] or [A * rows, C] of values' dtype: out[a * rows + r] =
values[a * S + s] for r in offsets[a][s]:offsets[a][s + 1]; rows no segment covers
are 0. Copies bits exactly. Bad input raises ValueError naming the argument and the
first bad position. Arrays and stream: as segment_reduce.)doc");
  m.def("gather_rows_coo", &gather_rows_coo_py, py::arg("values"), py::arg("index"), py::kw_only(),
        py::arg("batches") = 1, py::arg("stream") = py::none(),
        R"doc(Pick rows by index (torch_scatter's gather_coo).

values: [A * S] or [A * S, C] array of any reduction dtype, A = batches. index: int32
    or int64 array [E] (shared by every batch) or [A, E], every element in [0, S).
Returns out [A * E] or [A * E, C]: out[a * E + e] = values[a * S + index[a][e]].
Copies bits exactly. Bad input raises ValueError naming the argument and the first
bad position. Arrays and stream: as segment_reduce.)doc");
}

}  // namespace edgewise::python
