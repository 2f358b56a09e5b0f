// Python binding of run_length_encode and unique (one array or a sequence of chunks).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <vector>

#include "edgewise/kernels/run_length_encode.hpp"
#include "numpy_interop.hpp"

namespace edgewise::python {

namespace {

bool is_sequence(const py::handle& h) { return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h); }

// A list/tuple of arrays (or of sequences) is chunks; a list of numbers is one array.
bool holds_chunks(const py::object& keys) {
  if (!is_sequence(keys)) return false;
  for (const py::handle& item : keys) {
    if (py::isinstance<py::array>(item) || is_sequence(item) || py::hasattr(item, "__dlpack__")) return true;
  }
  return py::len(keys) == 0;
}

// The chunks of `keys`: the array itself, or each element of a list/tuple of arrays.
std::vector<py::array> chunks_of(Call& call, const py::object& keys, const char* op) {
  std::vector<py::array> chunks;
  if (holds_chunks(keys)) {
    for (const py::handle& item : keys) chunks.push_back(call.numpy(item, "keys"));
  } else {
    chunks.push_back(call.numpy(keys, "keys"));
  }
  for (size_t c = 0; c < chunks.size(); ++c) {
    EW_REQUIRE(chunks[c], op, ": keys must be an array or a list of arrays (chunk ", c, " is not an array)");
    EW_REQUIRE(chunks[c].ndim() == 1, op, ": keys must be 1-D (chunk ", c, " is ", chunks[c].ndim(), "-D)");
  }
  return chunks;
}

// The first `count` elements of `full` as a new array of their own.
template <class T>
py::array_t<T> shrink(const py::array_t<T>& full, int64_t count) {
  py::array_t<T> out = new_array<T>({count});
  if (count > 0) std::memcpy(out.mutable_data(), full.data(), static_cast<size_t>(count) * sizeof(T));
  return out;
}

template <class K>
py::object encode_typed(const std::vector<py::array>& chunks_in, bool with_lengths, const char* op) {
  std::vector<py::array_t<K, py::array::c_style>> chunks;
  std::vector<VectorView<const K>> views;
  int64_t total = 0;
  for (const py::array& c : chunks_in) {
    EW_REQUIRE(has_dtype<K>(c), op, ": every chunk must have the dtype of the first (", dtype_name(chunks_in[0]),
               "), got ", dtype_name(c));
    chunks.push_back(as_contiguous<K>(c));
    views.push_back(vector_of(chunks.back(), op, "keys"));
    total += views.back().size;
  }
  py::array_t<K> values = new_array<K>({total});
  py::array_t<int64_t> lengths = new_array<int64_t>({with_lengths ? total : 0});
  int64_t count = 0;
  {
    py::gil_scoped_release release;
    const std::span<const VectorView<const K>> span(views);
    const VectorView<K> v(values.mutable_data(), total);
    count = with_lengths ? run_length_encode<K>(span, v, VectorView<int64_t>(lengths.mutable_data(), total))
                         : unique<K>(span, v);
  }
  if (with_lengths) return py::make_tuple(shrink(values, count), shrink(lengths, count));
  return shrink(values, count);
}

py::object encode_chunks(const std::vector<py::array>& chunks, bool with_lengths, const char* op) {
  if (chunks.empty()) {  // no chunks at all: no runs
    if (with_lengths) return py::make_tuple(new_array<int64_t>({0}), new_array<int64_t>({0}));
    return new_array<int64_t>({0});
  }
  const py::array& first = chunks.front();
  if (has_dtype<int32_t>(first)) return encode_typed<int32_t>(chunks, with_lengths, op);
  if (has_dtype<int64_t>(first)) return encode_typed<int64_t>(chunks, with_lengths, op);
  if (has_dtype<uint32_t>(first)) return encode_typed<uint32_t>(chunks, with_lengths, op);
  detail::throw_invalid_argument(op, ": keys must be int32, int64 or uint32 (got ", dtype_name(first), ")");
}

py::object encode_py(const py::object& keys, bool with_lengths, const char* op) {
  Call call(op);
  return call.result(encode_chunks(chunks_of(call, keys, op), with_lengths, op));
}

}  // namespace

void register_run_length_encode(py::module_& m) {
  m.def(
      "run_length_encode", [](const py::object& keys) { return encode_py(keys, true, "run_length_encode"); },
      py::arg("keys"),
      R"doc(Runs of adjacent equal keys: (values, lengths).

keys: 1-D int32, int64 or uint32 array, or a list of such arrays (chunks forming
    one logical vector; a run continues across chunk seams and empty chunks).
Returns values (the key of each run, in order of first occurrence, keys' dtype) and
lengths (int64, each >= 1, summing to the number of keys). Runs are adjacent, not
global: [2, 2, 5, 2] gives values [2, 5, 2]; sort first for global grouping.
numpy.repeat(values, lengths) gives the keys back. Bad input raises ValueError.
Chunks may be NumPy arrays or CPU DLPack tensors (torch in -> torch out, read
without a copy when C-contiguous); CUDA tensors are not taken here (ValueError
naming the argument: move them to the CPU first).)doc");
  m.def(
      "unique", [](const py::object& keys) { return encode_py(keys, false, "unique"); }, py::arg("keys"),
      R"doc(The values of run_length_encode(keys): one per run of adjacent equal keys.

Equals numpy.unique only for sorted keys: [2, 2, 5, 2] gives [2, 5, 2].
keys: as for run_length_encode (an array or a list of chunks).)doc");
}

}  // namespace edgewise::python
