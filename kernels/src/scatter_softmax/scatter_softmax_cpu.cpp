// scatter_softmax's elementwise passes on the CPU (OpenMP, static partition of rows),
// compiled once per ISA level: the float exponentials are exp_nonpositive, which GCC
// vectorises (libm's expf is a call per element), and at SSE width that polynomial,
// not memory, bounds the pass. x - max is <= 0 in every group but a NaN's.
#include <algorithm>
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

// Calls f(element, group) for every element of values, each with the position of its
// group's entry in the [S, C] (transposed: [C, S]) group arrays; the inner loop runs
// along contiguous elements so that it vectorises.
template <class I, class F>
inline void for_each_element(const I* index, int64_t M, int64_t C, int64_t S, bool transposed, F&& f) {
  if (!transposed) {
#pragma omp for schedule(static)
    for (int64_t r = 0; r < M; ++r) {
      const int64_t row = r * C, group = static_cast<int64_t>(index[r]) * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) f(row + c, group + c);
    }
    return;
  }
  // [C, M]: blocks of a row of values, all gathering from one row of the groups (in cache).
  constexpr int64_t kBlock = 4096;
  const int64_t blocks = (M + kBlock - 1) / kBlock;
#pragma omp for schedule(static)
  for (int64_t b = 0; b < C * blocks; ++b) {
    const int64_t c = b / blocks, r0 = b % blocks * kBlock, r1 = std::min(M, r0 + kBlock);
    const int64_t row = c * M, group = c * S;
#pragma omp simd
    for (int64_t r = r0; r < r1; ++r) f(row + r, group + static_cast<int64_t>(index[r]));
  }
}

template <class T, class I>
void exponentials_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                      const T* group_max, T* out) {
  using F = Compute<T>;
#pragma omp parallel
  for_each_element(index, M, C, S, transposed, [&](int64_t i, int64_t g) {
    out[i] = T(exp_of_nonpositive<F>(static_cast<F>(values[i]) - static_cast<F>(group_max[g])));
  });
}

template <class T, class I>
void normalise_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                   const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out) {
#pragma omp parallel
  {
    if (kind == SoftmaxKind::Softmax) {
      for_each_element(index, M, C, S, transposed,
                       [&](int64_t i, int64_t g) { out[i] = softmax_value(out[i], group_sum[g]); });
    } else {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < S * C; ++i) group_sum[i] = log_of_sum(group_sum[i], eps);
      for_each_element(index, M, C, S, transposed, [&](int64_t i, int64_t g) {
        out[i] = log_softmax_value(values[i], group_max[g], group_sum[g]);
      });
    }
  }
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                          \
  template void exponentials_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, const T*, T*); \
  template void normalise_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, const T*, T*,        \
                                    SoftmaxKind, double, T*);
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
