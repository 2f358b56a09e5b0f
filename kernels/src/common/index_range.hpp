// The index-range check every primitive with an index argument shares (spmm,
// sddmm, scatter_reduce, ...): every index in [0, limit), the first offender named.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::detail {

// Whether `value` lies in [0, limit) (negative values fail too). EW_HD: the CUDA
// check and device code use the same test.
template <class I>
EW_HD_INLINE bool index_in_range(I value, int64_t limit) {
  return static_cast<uint64_t>(static_cast<int64_t>(value)) < static_cast<uint64_t>(limit);
}

// Every element of `values` must lie in [0, limit); otherwise throws
// std::invalid_argument "<op>: <name>[p] (v) must lie in [0, limit)" (+ " (<what>)"
// when `what` is not null). Reads the values on their device (CUDA: one kernel and
// one read-back).
template <class I>
void validate_index_range(const char* op, const char* name, VectorView<const I> values, int64_t limit,
                          const char* what, Context& ctx);

// Throws validate_index_range's error for values[position] == value.
[[noreturn]] void throw_index_out_of_range(const char* op, const char* name, int64_t position, int64_t value,
                                           int64_t limit, const char* what);

// CUDA half: the first position p in [0, n) with values[p] outside [0, limit), or -1.
template <class I>
int64_t first_out_of_range_cuda(const I* values, int64_t n, int64_t limit, Context& ctx);

}  // namespace edgewise::detail
