// scatter_softmax's elementwise passes on the CPU (OpenMP, static partition of rows),
// compiled once per ISA level: the float exponentials are exp_nonpositive, which GCC
// vectorises (libm's expf is a call per element), and at SSE width that polynomial,
// not memory, bounds the pass. x - max is <= 0 in every group but a NaN's.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "edgewise/kernels/common/exp_nonpositive.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "scatter_softmax/scatter_softmax_backends.hpp"
#include "scatter_softmax/scatter_softmax_core.hpp"

namespace edgewise::scatter_softmax_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {
template <class F>
inline F exp_of_nonpositive(F x) {
  if constexpr (std::is_same_v<F, float>) {
    return detail::exp_nonpositive(x);
  } else {
    return std::exp(x);
  }
}
}  // namespace

template <class T, class I>
void exponentials_cpu(const T* values, const I* index, int64_t M, int64_t C, const T* group_max, T* out) {
  using F = Compute<T>;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < M; ++r) {
    const T* __restrict v = values + r * C;
    const T* __restrict m = group_max + static_cast<int64_t>(index[r]) * C;
    T* __restrict o = out + r * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) o[c] = T(exp_of_nonpositive<F>(static_cast<F>(v[c]) - static_cast<F>(m[c])));
  }
}

template <class T, class I>
void normalise_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, const T* group_max,
                   T* group_sum, SoftmaxKind kind, double eps, T* out) {
  if (kind == SoftmaxKind::Softmax) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < M; ++r) {
      const T* __restrict z = group_sum + static_cast<int64_t>(index[r]) * C;
      T* __restrict o = out + r * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) o[c] = softmax_value(o[c], z[c]);
    }
    return;
  }
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t i = 0; i < S * C; ++i) group_sum[i] = log_of_sum(group_sum[i], eps);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < M; ++r) {
      const int64_t g = static_cast<int64_t>(index[r]) * C;
      const T* __restrict v = values + r * C;
      const T* __restrict m = group_max + g;
      const T* __restrict log_z = group_sum + g;
      T* __restrict o = out + r * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) o[c] = log_softmax_value(v[c], m[c], log_z[c]);
    }
  }
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                          \
  template void exponentials_cpu<T, I>(const T*, const I*, int64_t, int64_t, const T*, T*);               \
  template void normalise_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, const T*, T*, SoftmaxKind, \
                                    double, T*);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
// The baseline copy: every element type; the AVX2 / AVX-512 copies: float only (kIsaDispatchedElement).
#if EW_CPU_ISA_LEVEL == 0
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#else
EW_INSTANTIATE(float)
#endif
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::scatter_softmax_detail
