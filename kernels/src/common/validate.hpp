// Boundary checks shared by the primitives' dispatch code (run before any write).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::detail {

template <class T>
int64_t view_elements(const VectorView<T>& v) {
  return v.size;
}
template <class T>
int64_t view_elements(const MatrixView<T>& m) {
  return m.size();
}

// `name` must live on ctx.device(): views never move implicitly between devices;
// and that device must be usable here (require_available).
void require_device(const char* op, const char* name, Device actual, const Context& ctx);

// offsets [S+1] must start at 0, end at `rows` and never decrease. Reads the
// offsets on their device (CUDA: one small kernel and one read-back).
void validate_offsets(const char* op, const char* name, VectorView<const int64_t> offsets,
                      int64_t rows, Context& ctx);

// Two views that an op reads and writes (or writes twice) must not share memory:
// `a` ([a_bytes] at a_data) and `b`. Empty views never overlap.
void require_disjoint(const char* op, const char* a_name, const void* a_data, std::size_t a_bytes,
                      const char* b_name, const void* b_data, std::size_t b_bytes);

// require_disjoint for views (VectorView / MatrixView, any element types).
template <class A, class B>
void require_disjoint_views(const char* op, const char* a_name, const A& a, const char* b_name, const B& b) {
  require_disjoint(op, a_name, a.data, static_cast<std::size_t>(view_elements(a)) * sizeof(*a.data), b_name, b.data,
                   static_cast<std::size_t>(view_elements(b)) * sizeof(*b.data));
}

// CUDA half of validate_offsets: index of the first bad offset, or -1.
int64_t first_bad_offset_cuda(VectorView<const int64_t> offsets, int64_t rows, Context& ctx);

}  // namespace edgewise::detail
