// Runtime dtype -> template parameter dispatch shared by the bindings of the templated
// kernels (every binding that picks a kernel instantiation by an Array's dtype goes
// through here): one list of accepted dtypes per argument, one error message.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "array_interop.hpp"
#include "edgewise/kernels/common/element_types.hpp"

namespace edgewise::python {

// A list of accepted element types, in the order they are tried.
template <class... Ts>
struct DTypes {};

using FloatDTypes = DTypes<float, double>;
// The dense products (segment_matmul, grouped_matmul): bfloat16 accumulates in float.
using MatmulDTypes = DTypes<float, double, BFloat16>;

template <class... Ts>
DTypes<Ts...> dtypes_of(TypeList<Ts...>);
// The value types of the reductions (segment_reduce, scatter_reduce): the kernels'
// one list, EW_REDUCE_ELEMENT_TYPES.
using ReduceDTypes = decltype(dtypes_of(ReduceElementTypes{}));

// "float32, float64, int32 or uint32".
template <class... Ts>
std::string dtype_list() {
  const std::vector<std::string> names{dtype_name(dl_dtype_of<Ts>())...};
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

// Calls f(T{}) with the first T of Ts that is `array`'s dtype and returns its result;
// else a ValueError: "<op>: <name> must be <Ts> (got <dtype>)".
template <class... Ts, class F>
auto dispatch_dtype(DTypes<Ts...>, const Array& array, const char* op, const char* name, F&& f) {
  using Result = std::common_type_t<decltype(f(Ts{}))...>;
  std::optional<Result> result;
  (void)((array.is<Ts>() && (result.emplace(f(Ts{})), true)) || ...);
  if (!result) {
    detail::throw_invalid_argument(op, ": ", name, " must be ", dtype_list<Ts...>(), " (got ", array.dtype_str(), ")");
  }
  return std::move(*result);
}

// Calls f(T{}) with T = float or double, the dtype of `array` (else a ValueError naming it).
template <class F>
auto dispatch_float(const Array& array, const char* op, const char* name, F&& f) {
  return dispatch_dtype(FloatDTypes{}, array, op, name, std::forward<F>(f));
}

// Calls f(I{}) with I = int32_t or int64_t, the dtype of an index array from Call::indices.
template <class F>
auto dispatch_index(const Array& indices, F&& f) {
  if (indices.is<int32_t>()) return f(int32_t{});
  return f(int64_t{});
}

// The floating-point arguments of one call share a dtype: no silent float32 <-> float64 casts.
template <class T>
void require_float(const Array& array, const char* op, const char* name) {
  EW_REQUIRE(array.is<T>(), op, ": ", name, " must be ", dtype_name(dl_dtype_of<T>()),
             " like the other floating-point arguments (got ", array.dtype_str(), ")");
}

}  // namespace edgewise::python
