// Python binding of sort_by_key.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/kernels/sort_by_key.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "sort_by_key";

template <class K, class V>
py::tuple sort_with_values(const py::array_t<K, py::array::c_style>& keys, const py::array& values_in) {
  auto values = as_contiguous<V>(values_in);
  VectorView<const K> k = vector_of(keys, kOp, "keys");
  VectorView<const V> v = vector_of(values, kOp, "values");
  py::array_t<K> sorted_keys = new_array<K>({k.size});
  py::array_t<V> sorted_values = new_array<V>({v.size});
  {
    py::gil_scoped_release release;
    sort_by_key<K, V>(k, v, VectorView<K>(sorted_keys.mutable_data(), k.size),
                      VectorView<V>(sorted_values.mutable_data(), v.size));
  }
  return py::make_tuple(sorted_keys, sorted_values);
}

template <class K>
py::tuple sort_typed(const py::array& keys_in, const py::object& values) {
  auto keys = as_contiguous<K>(keys_in);
  VectorView<const K> k = vector_of(keys, kOp, "keys");
  if (values.is_none()) {
    py::array_t<K> sorted_keys = new_array<K>({k.size});
    py::array_t<int64_t> permutation = new_array<int64_t>({k.size});
    {
      py::gil_scoped_release release;
      sort_by_key<K>(k, VectorView<K>(sorted_keys.mutable_data(), k.size),
                     VectorView<int64_t>(permutation.mutable_data(), k.size));
    }
    return py::make_tuple(sorted_keys, permutation);
  }
  const py::array v = as_numpy(values, kOp, "values");
  if (has_dtype<int32_t>(v)) return sort_with_values<K, int32_t>(keys, v);
  if (has_dtype<uint32_t>(v)) return sort_with_values<K, uint32_t>(keys, v);
  if (has_dtype<int64_t>(v)) return sort_with_values<K, int64_t>(keys, v);
  if (has_dtype<float>(v)) return sort_with_values<K, float>(keys, v);
  if (has_dtype<double>(v)) return sort_with_values<K, double>(keys, v);
  detail::throw_invalid_argument(kOp, ": values must be int32, uint32, int64, float32 or float64 (got ",
                                 dtype_name(v), ")");
}

py::tuple sort_dispatch(const py::array& keys, const py::object& values) {
  if (has_dtype<int32_t>(keys)) return sort_typed<int32_t>(keys, values);
  if (has_dtype<int64_t>(keys)) return sort_typed<int64_t>(keys, values);
  if (has_dtype<uint32_t>(keys)) return sort_typed<uint32_t>(keys, values);
  detail::throw_invalid_argument(kOp, ": keys must be int32, int64 or uint32 (got ", dtype_name(keys), ")");
}

py::object sort_by_key_py(const py::object& keys, const py::object& values) {
  Call call(kOp);
  py::array k = call.numpy(keys, "keys");
  py::object v = values.is_none() ? values : py::object(call.numpy(values, "values"));
  return call.result(sort_dispatch(k, v));
}

}  // namespace

void register_sort_by_key(py::module_& m) {
  m.def("sort_by_key", &sort_by_key_py, py::arg("keys"), py::arg("values") = py::none(),
        R"doc(Stable sort of integer keys, carrying a permutation or values.

keys: 1-D int32, int64 or uint32 array [E] (used without a copy when C-contiguous).
values: optional 1-D array [E] of int32, uint32, int64, float32 or float64.
Returns (sorted_keys, permutation) with permutation int64 and
sorted_keys == keys[permutation]; or, with values, (sorted_keys, values[permutation]).
Stable: equal keys keep their input order (like numpy.argsort(kind="stable")).
Bad input raises ValueError.

keys/values may be NumPy arrays or CPU DLPack tensors (torch in -> torch out; read
without a copy when C-contiguous). CUDA tensors are not taken here: move them to the
CPU first (ValueError naming the argument).)doc");
}

}  // namespace edgewise::python
