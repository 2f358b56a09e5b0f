// Python binding of offsets_from_keys.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "edgewise/kernels/offsets_from_keys.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "offsets_from_keys";

template <class K>
py::array_t<int64_t> offsets_typed(const py::array& keys_in, int64_t num_segments) {
  auto keys = as_contiguous<K>(keys_in);
  VectorView<const K> k = vector_of(keys, kOp, "keys");
  py::array_t<int64_t> offsets = new_array<int64_t>({num_segments + 1});
  {
    py::gil_scoped_release release;
    offsets_from_keys<K>(k, VectorView<int64_t>(offsets.mutable_data(), num_segments + 1));
  }
  return offsets;
}

py::array_t<int64_t> offsets_dispatch(const py::array& keys, int64_t num_segments) {
  if (has_dtype<int32_t>(keys)) return offsets_typed<int32_t>(keys, num_segments);
  if (has_dtype<uint32_t>(keys)) return offsets_typed<uint32_t>(keys, num_segments);
  // Any other integer type (and empty arrays of any type) go through int64.
  return offsets_typed<int64_t>(as_int64(keys, kOp, "keys"), num_segments);
}

py::object offsets_from_keys_py(const py::object& keys, int64_t num_segments) {
  EW_REQUIRE(num_segments >= 0, kOp, ": num_segments (", num_segments, ") must be >= 0");
  Call call(kOp);
  return call.result(offsets_dispatch(call.numpy(keys, "keys"), num_segments));
}

}  // namespace

void register_offsets_from_keys(py::module_& m) {
  m.def("offsets_from_keys", &offsets_from_keys_py, py::arg("keys"), py::arg("num_segments"),
        R"doc(CSR offsets [S+1] from sorted segment ids.

keys: 1-D integer array [E], sorted (nondecreasing), each in [0, num_segments).
Returns int64 offsets with offsets[s] = number of keys < s: segment s owns keys
offsets[s]:offsets[s+1]; segments no key names are empty. These are the offsets
segment_reduce takes. Unsorted or out-of-range keys raise ValueError naming the
first bad position.

keys may be a NumPy array or a CPU DLPack tensor (torch in -> torch out; read without
a copy when C-contiguous int32/uint32/int64). CUDA tensors are not taken here: move
them to the CPU first (ValueError naming the argument).)doc");
}

}  // namespace edgewise::python
