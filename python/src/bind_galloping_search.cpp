// Python binding of galloping_search.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <string>
#include <vector>

#include "edgewise/kernels/galloping_search.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "galloping_search";

template <class T>
py::tuple galloping_search_typed(const py::array& values_in, const py::array& queries_in, const py::object& segments_in,
                                 const py::object& value_order_in, int64_t queries_per_tile, int64_t max_query_count) {
  auto values = as_contiguous<T>(values_in);
  auto queries = as_contiguous<T>(queries_in);
  VectorView<const T> v = vector_of(values, kOp, "values");
  VectorView<const T> q = vector_of(queries, kOp, "queries");
  py::array_t<int64_t, py::array::c_style> order;
  VectorView<const int64_t> order_view;
  if (!value_order_in.is_none()) {
    order = as_int64(as_numpy(value_order_in, kOp, "value_order"), kOp, "value_order");
    order_view = vector_of(order, kOp, "value_order");
    // An empty value_order is still present (its segments address an empty view).
    static const int64_t kNoEntries = 0;
    if (order_view.data == nullptr) order_view = VectorView<const int64_t>(&kNoEntries, 0);
  }
  const int64_t V = value_order_in.is_none() ? v.size : order_view.size;
  py::array_t<int64_t, py::array::c_style> segments;
  if (segments_in.is_none()) {
    segments = py::array_t<int64_t, py::array::c_style>(std::vector<py::ssize_t>{1, 4});
    int64_t* r = segments.mutable_data();
    r[0] = 0;
    r[1] = V;
    r[2] = 0;
    r[3] = q.size;
  } else {
    segments = as_int64(as_numpy(segments_in, kOp, "segments"), kOp, "segments");
    EW_REQUIRE((segments.ndim() == 2 && segments.shape(1) == 4) || (segments.ndim() == 1 && segments.shape(0) % 4 == 0),
               kOp, ": segments must be [S, 4] or packed [4 S] records [valueOffset, valueCount, queryOffset, "
               "queryCount] (got shape ", std::string(py::str(segments.attr("shape"))), ")");
  }
  const int64_t S = static_cast<int64_t>(segments.size()) / 4;
  MatrixView<const int64_t> seg(segments.data(), S, 4);
  // Queries no well-formed segment answers read -1.
  py::array_t<int64_t> positions = new_array<int64_t>({q.size});
  std::fill_n(positions.mutable_data(), q.size, int64_t{-1});
  VectorView<int64_t> pos(positions.mutable_data(), q.size);
  uint32_t word = 0;
  GallopingSearchOptions options;
  options.queries_per_tile = queries_per_tile;
  options.max_query_count = max_query_count;
  {
    py::gil_scoped_release release;
    galloping_search<T>(v, order_view, q, seg, pos, VectorView<uint32_t>(&word, 1), options);
  }
  return py::make_tuple(positions, word);
}

py::tuple galloping_search_numpy(const py::array& values, const py::array& queries, const py::object& segments,
                                 const py::object& value_order, int64_t queries_per_tile, int64_t max_query_count) {
  EW_REQUIRE(queries.dtype().is(values.dtype()), kOp, ": queries must have the dtype of values (", dtype_name(values),
             "), got ", dtype_name(queries));
  if (has_dtype<float>(values)) {
    return galloping_search_typed<float>(values, queries, segments, value_order, queries_per_tile, max_query_count);
  }
  if (has_dtype<uint32_t>(values)) {
    return galloping_search_typed<uint32_t>(values, queries, segments, value_order, queries_per_tile,
                                            max_query_count);
  }
  detail::throw_invalid_argument(kOp, ": values must be float32 or uint32 (got ", dtype_name(values), ")");
}

py::object galloping_search_py(const py::object& values, const py::object& queries, const py::object& segments,
                               const py::object& value_order, int64_t queries_per_tile, int64_t max_query_count) {
  Call call(kOp);
  py::array v = call.numpy(values, "values");
  py::array q = call.numpy(queries, "queries");
  py::object seg = segments.is_none() ? segments : py::object(call.numpy(segments, "segments"));
  py::object order = value_order.is_none() ? value_order : py::object(call.numpy(value_order, "value_order"));
  return call.result(galloping_search_numpy(v, q, seg, order, queries_per_tile, max_query_count));
}

}  // namespace

void register_galloping_search(py::module_& m) {
  m.def("galloping_search", &galloping_search_py, py::arg("values"), py::arg("queries"), py::arg("segments") = py::none(),
        py::arg("value_order") = py::none(), py::arg("queries_per_tile") = 32, py::arg("max_query_count") = -1,
        R"doc(Lower-bound positions of ordered queries in segmented sorted values (galloping search).

values: float32 or uint32 [N]; queries: the same dtype, [Q] (both used without a copy
    when C-contiguous).
segments: integer [S, 4] (or packed [4 S]) records [valueOffset, valueCount, queryOffset,
    queryCount]: segment s searches value positions valueOffset:valueOffset+valueCount
    (each sorted ascending) for queries queryOffset:queryOffset+queryCount. None: one
    segment over every value and every query (a batched lower_bound).
value_order: optional integer [O]: value position p means values[value_order[p]] (a
    sorted secondary index); positions then address value_order. Entries must lie in [0, N).
queries_per_tile: queries searched together, galloping from one another (default 32).
max_query_count: segments with more queries are reported (bit 2) and skipped; -1: no cap.

Returns (positions, validation_word): positions int64 [Q] = valueOffset + the number of
the segment's values < the query (NaN: valueOffset + valueCount); -1 where no well-formed
segment covers a query. validation_word ORs 1 (a value range out of bounds), 2 (a query
range out of bounds or above max_query_count), 4 (a query smaller than the one before it
in its tile; its position is still exact), 8 (a NaN or infinite float query).
Malformed segments write nothing. Bad arguments raise ValueError.
Arrays may be NumPy arrays or CPU DLPack tensors (torch in -> torch positions out,
read without a copy when C-contiguous); CUDA tensors are not taken here (ValueError
naming the argument: move them to the CPU first).)doc");
}

}  // namespace edgewise::python
