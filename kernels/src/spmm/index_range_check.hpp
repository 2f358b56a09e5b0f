// The CSR index-range check that spmm and sddmm (and edge_gather_sum) share:
// every index in [0, limit), the first offender named in the error. Host compiler only.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/view.hpp"
#include "spmm/spmm_backends.hpp"
#include "spmm/spmm_core.hpp"

namespace edgewise::spmm_detail {

// First position of `values` outside [0, limit), or -1 (CPU: a parallel scan).
template <class I>
int64_t first_out_of_range_cpu(const I* values, int64_t n, int64_t limit) {
  int64_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static) if (n >= (int64_t{1} << 16))
  for (int64_t i = 0; i < n; ++i) {
    if (!index_in_range(values[i], limit)) first = std::min(first, i);
  }
  return first == n ? -1 : first;
}

// Every element of `values` must lie in [0, limit); `what` says what limit is.
template <class I>
void validate_index_range(const char* op, const char* name, VectorView<const I> values, int64_t limit,
                          const char* what, [[maybe_unused]] Context& ctx) {
  if (values.size == 0) return;
  int64_t bad = -1;
  if (values.device.is_cpu()) {
    bad = first_out_of_range_cpu(values.data, values.size, limit);
  } else {
#if EDGEWISE_WITH_CUDA
    bad = first_out_of_range_cuda(values.data, values.size, limit, ctx);
#else
    detail::throw_built_without_cuda(op);
#endif
  }
  if (bad < 0) return;
  I value{};
  copy_bytes(&value, Device::cpu(), values.data + bad, values.device, sizeof(I), ctx.stream());
  detail::throw_invalid_argument(op, ": ", name, "[", bad, "] (", static_cast<int64_t>(value), ") must lie in [0, ",
                                 limit, ") (", what, ")");
}

}  // namespace edgewise::spmm_detail
