// Python binding of offsets_from_keys (NumPy or DLPack arrays, CPU or CUDA; array_interop.hpp).
#include <pybind11/pybind11.h>

#include "array_interop.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"

namespace edgewise::python {

namespace {

constexpr const char* kOp = "offsets_from_keys";

template <class K>
py::object offsets_typed(Call& call, const Array& keys, int64_t num_segments) {
  VectorView<const K> k = keys.vector<K>(kOp, "keys");
  Array offsets = call.empty<int64_t>({num_segments + 1});
  Context& ctx = call.context();
  {
    py::gil_scoped_release release;
    offsets_from_keys<K>(k, offsets.mutable_vector<int64_t>(), ctx);
  }
  return call.result(offsets);
}

py::object offsets_from_keys_py(const py::object& keys_in, int64_t num_segments, const py::object& stream) {
  EW_REQUIRE(num_segments >= 0, kOp, ": num_segments (", num_segments, ") must be >= 0");
  Call call(kOp);
  call.use_stream(stream);
  Array keys = call.array(keys_in, "keys");
  if (keys.is<int32_t>()) return offsets_typed<int32_t>(call, keys, num_segments);
  if (keys.is<uint32_t>()) return offsets_typed<uint32_t>(call, keys, num_segments);
  // Any other integer type (and empty arrays of any type) go through int64 (CUDA: int64 only).
  return offsets_typed<int64_t>(call, call.to_int64(std::move(keys), "keys"), num_segments);
}

}  // namespace

void register_offsets_from_keys(py::module_& m) {
  m.def("offsets_from_keys", &offsets_from_keys_py, py::arg("keys"), py::arg("num_segments"),
        py::kw_only(), py::arg("stream") = py::none(),
        R"doc(CSR offsets [S+1] from sorted segment ids.

keys: 1-D integer array [E], sorted (nondecreasing), each in [0, num_segments).
Returns int64 offsets with offsets[s] = number of keys < s: segment s owns keys
offsets[s]:offsets[s+1]; segments no key names are empty. These are the offsets
segment_reduce takes. Unsorted or out-of-range keys raise ValueError naming the
first bad position.

keys: a NumPy array or any DLPack tensor, CPU or CUDA (read without a copy when
C-contiguous int32/uint32/int64; other integer dtypes on CPU are converted to int64
once). CUDA runs on the caller's current stream; the result comes back in the
caller's framework (torch in -> torch out).
stream (keyword): the CUDA stream to run on instead of the caller's current one (see spmm).)doc");
}

}  // namespace edgewise::python
