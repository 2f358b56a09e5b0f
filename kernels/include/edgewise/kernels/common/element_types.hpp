// The element types of the reductions (segment_reduce, scatter_reduce) as ONE list:
// the explicit instantiations and extern declarations, the bindings' dtype dispatch
// and the tests all expand EW_REDUCE_ELEMENT_TYPES, so a new type is one line here
// (plus whatever its traits need in common/reducer.hpp and common/monotone.hpp).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/half.hpp"

namespace edgewise {

// X(T) for every value type of the reductions. What each needs at build time:
// float gets the per-ISA copies and compile-time row widths; the others run the
// baseline copy, and the types after uint32 the generic row loop only
// (cpu_isa/row_width.hpp), so each costs one set of instantiations per op.
#define EW_REDUCE_ELEMENT_TYPES(X) \
  X(float)                         \
  X(double)                        \
  X(int32_t)                       \
  X(uint32_t)                      \
  X(int64_t)                       \
  X(Half)                          \
  X(BFloat16)

// X(I) for every index type of scatter_reduce (and its backward).
#define EW_REDUCE_INDEX_TYPES(X) \
  X(int32_t)                     \
  X(int64_t)

// The same lists as types, for code that iterates at compile time (the bindings'
// runtime dtype dispatch, typed tests).
template <class... Ts>
struct TypeList {};

namespace element_types_detail {
struct ListStart {};
template <class... Ts>
TypeList<Ts...> list_of(ListStart, Ts...);
}  // namespace element_types_detail

#define EW_ELEMENT_TYPE_ARGUMENT(T) , T{}
using ReduceElementTypes = decltype(element_types_detail::list_of(
    element_types_detail::ListStart{} EW_REDUCE_ELEMENT_TYPES(EW_ELEMENT_TYPE_ARGUMENT)));
#undef EW_ELEMENT_TYPE_ARGUMENT

}  // namespace edgewise
