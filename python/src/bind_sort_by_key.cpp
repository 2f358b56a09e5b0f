// Python binding of sort_by_key (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include "array_interop.hpp"
#include "dtype_dispatch.hpp"
#include "edgewise/kernels/sort_by_key.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "sort_by_key";

template <class K, class V>
py::tuple sort_with_values(Call& call, const Array& keys, const Array& values) {
  VectorView<const K> k = keys.vector<K>(kOp, "keys");
  VectorView<const V> v = values.vector<V>(kOp, "values");
  Array sorted_keys = call.empty<K>({k.size});
  Array sorted_values = call.empty<V>({v.size});
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    sort_by_key<K, V>(k, v, sorted_keys.mutable_vector<K>(), sorted_values.mutable_vector<V>(), ctx);
  }
  return py::make_tuple(call.result(sorted_keys), call.result(sorted_values));
}

template <class K>
py::tuple sort_typed(Call& call, const Array& keys, const std::optional<Array>& values) {
  if (!values) {
    VectorView<const K> k = keys.vector<K>(kOp, "keys");
    Array sorted_keys = call.empty<K>({k.size});
    Array permutation = call.empty<int64_t>({k.size});
    Context& ctx = call.context();
    {
      py::gil_scoped_release release;
      sort_by_key<K>(k, sorted_keys.mutable_vector<K>(), permutation.mutable_vector<int64_t>(), ctx);
    }
    return py::make_tuple(call.result(sorted_keys), call.result(permutation));
  }
  return dispatch_dtype(DTypes<int32_t, uint32_t, int64_t, float, double>{}, *values, kOp, "values",
                        [&](auto v) { return sort_with_values<K, decltype(v)>(call, keys, *values); });
}

py::tuple sort_by_key_py(const py::object& keys_in, const py::object& values_in, const py::object& stream) {
  Call call(kOp);
  call.use_stream(stream);
  Array keys = call.array(keys_in, "keys");
  std::optional<Array> values = call.optional_array(values_in, "values");
  return dispatch_dtype(DTypes<int32_t, int64_t, uint32_t>{}, keys, kOp, "keys",
                        [&](auto k) { return sort_typed<decltype(k)>(call, keys, values); });
}

}  // namespace

void register_sort_by_key(py::module_& m) {
  m.def("sort_by_key", &sort_by_key_py, py::arg("keys"), py::arg("values") = py::none(),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(Stable sort of integer keys, carrying a permutation or values.

keys: 1-D int32, int64 or uint32 array [E].
values: optional 1-D array [E] of int32, uint32, int64, float32 or float64.
Returns (sorted_keys, permutation) with permutation int64 and
sorted_keys == keys[permutation]; or, with values, (sorted_keys, values[permutation]).
Stable: equal keys keep their input order (like numpy.argsort(kind="stable")).
Bad input raises ValueError.

keys/values: NumPy arrays or any DLPack tensors, CPU or CUDA, on one device (used
without a copy when C-contiguous; non-contiguous CPU input is copied once). CUDA
runs on the caller's current stream; results come back in the caller's framework
(torch in -> torch out).
stream (keyword): the CUDA stream to run on instead of the caller's current one (see spmm).)doc");
}

}  // namespace edgewise::python
