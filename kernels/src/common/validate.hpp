// Boundary checks shared by the primitives' dispatch code (run before any write).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::detail {

// `name` must live on ctx.device(): views never move implicitly between devices.
void require_device(const char* op, const char* name, Device actual, const Context& ctx);

// offsets [S+1] must start at 0, end at `rows` and never decrease. Reads the
// offsets on their device (CUDA: one small kernel and one read-back).
void validate_offsets(const char* op, const char* name, VectorView<const int64_t> offsets,
                      int64_t rows, Context& ctx);

// CUDA half of validate_offsets: index of the first bad offset, or -1.
int64_t first_bad_offset_cuda(VectorView<const int64_t> offsets, int64_t rows, Context& ctx);

}  // namespace edgewise::detail
