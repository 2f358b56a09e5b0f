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

// Row-major values [M, C], groups [S, C]: f(element, group entry) along each row. The
// group rows of `rows` are prefetched kGroupPrefetchAhead rows ahead: groups in random
// order miss the caches once [S, C] outgrows them, and a row's misses would otherwise
// wait for its turn.
constexpr int64_t kGroupPrefetchAhead = 8;

template <class T, class I, int N, class F>
inline void for_each_row_major(const I* index, int64_t M, int64_t C, const T* const (&rows)[N], F&& f) {
  const int64_t row_bytes = C * static_cast<int64_t>(sizeof(T));
#pragma omp for schedule(static)
  for (int64_t r = 0; r < M; ++r) {
    if (r + kGroupPrefetchAhead < M) {
      const int64_t ahead = static_cast<int64_t>(index[r + kGroupPrefetchAhead]) * C;
      for (int k = 0; k < N; ++k) {
        const char* p = reinterpret_cast<const char*>(rows[k] + ahead);
        for (int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b);
      }
    }
    const int64_t row = r * C, group = static_cast<int64_t>(index[r]) * C;
#pragma omp simd
    for (int64_t c = 0; c < C; ++c) f(row + c, group + c);
  }
}

// Transposed values [C, M], groups [C, S], in blocks of a row of values: the block's
// group entries are gathered into contiguous buffers first (a scalar loop over a group
// row that stays in cache), so that f(element, position in the block) vectorises (GCC
// does not vectorise the gather itself). `rows` are the group arrays to gather from.
constexpr int64_t kTransposedBlock = 1024;

template <class T, class I, int N, class F>
inline void for_each_transposed(const I* index, int64_t M, int64_t C, int64_t S, const T* const (&rows)[N],
                                F&& f) {
  const int64_t blocks = (M + kTransposedBlock - 1) / kTransposedBlock;
  T gathered[N][kTransposedBlock];
#pragma omp for schedule(static)
  for (int64_t b = 0; b < C * blocks; ++b) {
    const int64_t c = b / blocks, r0 = b % blocks * kTransposedBlock;
    const int64_t n = std::min(kTransposedBlock, M - r0);
    for (int k = 0; k < N; ++k) {
      const T* group_row = rows[k] + c * S;
      for (int64_t q = 0; q < n; ++q) gathered[k][q] = group_row[static_cast<int64_t>(index[r0 + q])];
    }
    const int64_t first = c * M + r0;
#pragma omp simd
    for (int64_t q = 0; q < n; ++q) f(first + q, gathered, q);
  }
}

template <class T, class I>
void exponentials_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                      bool nan_as_zero, const T* group_max, T* out) {
  using F = Compute<T>;
  const auto exp_at = [&](int64_t i, T max) {
    const F e = exp_of_nonpositive<F>(static_cast<F>(values[i]) - static_cast<F>(max));
    out[i] = T(nan_as_zero && e != e ? F(0) : e);
  };
#pragma omp parallel
  {
    if (transposed) {
      const T* const rows[1] = {group_max};
      for_each_transposed(index, M, C, S, rows, [&](int64_t i, auto& g, int64_t q) { exp_at(i, g[0][q]); });
    } else {
      const T* const rows[1] = {group_max};
      for_each_row_major(index, M, C, rows, [&](int64_t i, int64_t g) { exp_at(i, group_max[g]); });
    }
  }
}

template <class T>
void logsumexp_finalise_cpu(const T* group_max, const T* group_sum, int64_t n, double eps, T* out) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = logsumexp_value(group_max[i], group_sum[i], eps);
}

template <class T, class I>
void normalise_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                   const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out) {
#pragma omp parallel
  {
    if (kind == SoftmaxKind::Softmax) {
      if (transposed) {
        const T* const rows[1] = {group_sum};
        for_each_transposed(index, M, C, S, rows,
                            [&](int64_t i, auto& g, int64_t q) { out[i] = softmax_value(out[i], g[0][q]); });
      } else {
        const T* const rows[1] = {group_sum};
        for_each_row_major(index, M, C, rows,
                           [&](int64_t i, int64_t g) { out[i] = softmax_value(out[i], group_sum[g]); });
      }
    } else {
#pragma omp for schedule(static)
      for (int64_t i = 0; i < S * C; ++i) group_sum[i] = log_of_sum(group_sum[i], eps);
      if (transposed) {
        const T* const rows[2] = {group_max, group_sum};
        for_each_transposed(index, M, C, S, rows, [&](int64_t i, auto& g, int64_t q) {
          out[i] = log_softmax_value(values[i], g[0][q], g[1][q]);
        });
      } else {
        const T* const rows[2] = {group_max, group_sum};
        for_each_row_major(index, M, C, rows, [&](int64_t i, int64_t g) {
          out[i] = log_softmax_value(values[i], group_max[g], group_sum[g]);
        });
      }
    }
  }
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                          \
  template void exponentials_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, bool, const T*, T*); \
  template void normalise_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, const T*, T*,        \
                                    SoftmaxKind, double, T*);
#define EW_INSTANTIATE(T)                                                                   \
  template void logsumexp_finalise_cpu<T>(const T*, const T*, int64_t, double, T*);        \
  EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
// The baseline copy: every element type; the AVX2 / AVX-512 copies: float and the 16-bit
// floats (kIsaDispatchedScatterElement: their exponentials are float polynomials, which
// the baseline's SSE width leaves bound by arithmetic, not memory).
EW_INSTANTIATE(float)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#if EW_CPU_ISA_LEVEL == 0
EW_INSTANTIATE(double)
#endif
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::scatter_softmax_detail
