// Runtime dtype -> template parameter dispatch shared by the bindings of the templated
// kernels: float32 / float64 values, int32 / int64 indices, one float dtype per call.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>

#include "array_interop.hpp"

namespace edgewise::python {

// Calls f(T{}) with T = float or double, the dtype of `array` (else a ValueError naming it).
template <class F>
py::object dispatch_float(const Array& array, const char* op, const char* name, F&& f) {
  if (array.is<float>()) return f(float{});
  if (array.is<double>()) return f(double{});
  detail::throw_invalid_argument(op, ": ", name, " must be float32 or float64 (got ", array.dtype_str(), ")");
}

// Calls f(I{}) with I = int32_t or int64_t, the dtype of an index array from Call::indices.
template <class F>
py::object dispatch_index(const Array& indices, F&& f) {
  if (indices.is<int32_t>()) return f(int32_t{});
  return f(int64_t{});
}

// The floating-point arguments of one call share a dtype: no silent float32 <-> float64 casts.
template <class T>
void require_float(const Array& array, const char* op, const char* name) {
  EW_REQUIRE(array.is<T>(), op, ": ", name, " must be ", sizeof(T) == 8 ? "float64" : "float32",
             " like the other floating-point arguments (got ", array.dtype_str(), ")");
}

}  // namespace edgewise::python
