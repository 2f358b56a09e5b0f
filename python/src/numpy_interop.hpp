// NumPy <-> Edgewise views for the CPU-only bindings: borrow arrays without copying
// when they are C-contiguous with the right dtype, copy (once) otherwise. The NumPy
// half of the conversion layer: array_interop.hpp turns DLPack objects into these
// arrays (as_numpy) and holds the device-generic path the primitives use.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

#include "edgewise/kernels/common/check.hpp"
#include "array_interop.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::python {

namespace py = pybind11;

// A C-contiguous array of T: `array` itself when it already is one, else a converted copy.
template <class T>
py::array_t<T, py::array::c_style> as_contiguous(const py::array& array) {
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(array);
}

// Whether `array` holds T exactly (dtype kind and size).
template <class T>
bool has_dtype(const py::array& array) {
  return array.dtype().is(py::dtype::of<T>());
}

// 1-D or 2-D array as a [rows, cols] matrix view (1-D: cols = 1).
template <class T>
MatrixView<const T> matrix_of(const py::array_t<T, py::array::c_style>& a, const char* op, const char* name) {
  EW_REQUIRE(a.ndim() == 1 || a.ndim() == 2, op, ": ", name, " must be 1-D or 2-D (got ", a.ndim(), "-D)");
  const int64_t rows = a.ndim() >= 1 ? a.shape(0) : 1;
  const int64_t cols = a.ndim() == 2 ? a.shape(1) : 1;
  return {a.data(), rows, cols};
}

template <class T>
VectorView<const T> vector_of(const py::array_t<T, py::array::c_style>& a, const char* op, const char* name) {
  EW_REQUIRE(a.ndim() == 1, op, ": ", name, " must be 1-D (got ", a.ndim(), "-D)");
  return {a.data(), static_cast<int64_t>(a.shape(0))};
}

// Any integer array as int64 (no copy when it already is int64 and contiguous).
inline py::array_t<int64_t, py::array::c_style> as_int64(const py::array& array, const char* op, const char* name) {
  EW_REQUIRE(array.dtype().kind() == 'i' || array.dtype().kind() == 'u' || array.size() == 0, op, ": ", name,
             " must be an integer array (got dtype ", std::string(py::str(array.dtype())), ")");
  return as_contiguous<int64_t>(array);
}

// A 1-D integer array as int64 (a 2-D array is refused, never flattened).
inline py::array_t<int64_t, py::array::c_style> as_int64_vector(const py::array& array, const char* op,
                                                               const char* name) {
  EW_REQUIRE(array.ndim() == 1, op, ": ", name, " must be 1-D (got ", array.ndim(), "-D)");
  return as_int64(array, op, name);
}

// A 1-D array of finite values >= 0 as float32. A positive value that float32 would
// round to 0 (a float64 below 1.4e-45) is refused rather than silently made 0.
py::array_t<float, py::array::c_style> as_nonnegative_float32_vector(const py::array& array, const char* op,
                                                                    const char* name);

// A new uninitialised array of `shape` (the output of an op).
template <class T>
py::array_t<T> new_array(std::initializer_list<py::ssize_t> shape) {
  return py::array_t<T>(std::vector<py::ssize_t>(shape));
}

template <class T>
MatrixView<T> mutable_matrix_of(py::array_t<T>& a, int64_t rows, int64_t cols) {
  return {a.mutable_data(), rows, cols};
}

inline std::string dtype_name(const py::array& array) { return std::string(py::str(array.dtype())); }

}  // namespace edgewise::python
