// Boundary checks shared by the primitives' dispatch code (run before any write).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

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

// A view's name and byte range, for require_outputs_disjoint (absent views: 0 bytes).
struct NamedBytes {
  const char* name;
  const void* data;
  std::size_t bytes;
};
template <class V>
NamedBytes named(const char* name, const V& view) {
  return {name, view.data, static_cast<std::size_t>(view_elements(view)) * sizeof(*view.data)};
}

// The no-overlap contract: every output disjoint from every input and from the
// other outputs (require_disjoint on each pair, in order).
void require_outputs_disjoint(const char* op, std::initializer_list<NamedBytes> outputs,
                              std::initializer_list<NamedBytes> inputs);

// CUDA half of validate_offsets: index of the first bad offset, or -1.
int64_t first_bad_offset_cuda(VectorView<const int64_t> offsets, int64_t rows, Context& ctx);

}  // namespace edgewise::detail
