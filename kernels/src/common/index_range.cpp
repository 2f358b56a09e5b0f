// validate_index_range: the CPU scan and the device dispatch.
#include "common/index_range.hpp"

#include <algorithm>

#include "common/cuda_backend.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"

namespace edgewise::detail {

namespace {
// First position of `values` outside [0, limit), or -1 (a parallel scan). No `simd`
// clause: without AVX-512, GCC 12 vectorises the int64 min reduction through an MMX
// register and leaves the x87 stack tagged (no emms), so later long double math
// returns NaN.
template <class I>
int64_t first_out_of_range_cpu(const I* values, int64_t n, int64_t limit) {
  int64_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static) if (n >= (int64_t{1} << 16))
  for (int64_t i = 0; i < n; ++i) {
    first = index_in_range(values[i], limit) ? first : std::min(first, i);
  }
  return first == n ? -1 : first;
}
}  // namespace

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
    throw_built_without_cuda(op);
#endif
  }
  if (bad < 0) return;
  I value{};
  copy_bytes(&value, Device::cpu(), values.data + bad, values.device, sizeof(I), ctx.stream());
  throw_index_out_of_range(op, name, bad, static_cast<int64_t>(value), limit, what);
}

void throw_index_out_of_range(const char* op, const char* name, int64_t position, int64_t value, int64_t limit,
                              const char* what) {
  if (what != nullptr) {
    throw_invalid_argument(op, ": ", name, "[", position, "] (", value, ") must lie in [0, ", limit, ") (", what, ")");
  }
  throw_invalid_argument(op, ": ", name, "[", position, "] (", value, ") must lie in [0, ", limit, ")");
}

template void validate_index_range<int32_t>(const char*, const char*, VectorView<const int32_t>, int64_t,
                                            const char*, Context&);
template void validate_index_range<int64_t>(const char*, const char*, VectorView<const int64_t>, int64_t,
                                            const char*, Context&);

}  // namespace edgewise::detail
