// scatter_softmax's elementwise passes on the CPU (OpenMP, static partition of rows),
// compiled once per ISA level: the float exponentials are exp_nonpositive, which GCC
// vectorises (libm's expf is a call per element), and at SSE width that polynomial,
// not memory, bounds the pass. x - max is <= 0 in every group but a NaN's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/common/exp_nonpositive.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "common/row_groups_cpu.hpp"
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

// Every group whole, from its rows gathered in order (common/row_groups_cpu.hpp): the
// max, the sum of exponentials and the outputs of a group in one visit, its rows in
// L1 after the first pass, where the passes above each read [S, C] group arrays at
// random. The same arithmetic as those passes (exponentials rounded to T and summed
// in the sum's accumulator in row order), so the results are the same bits.
enum class GroupedOutput { Softmax, LogSoftmax, LogSumExp };

template <GroupedOutput kOut, class T, class I>
void grouped_softmax_kind(const T* values, const I* index, int64_t M, int64_t C, int64_t S, double eps, T* out) {
  using namespace row_groups_detail;
  using F = Compute<T>;
  using Acc = typename Reducer<ReduceOp::Sum, T>::Acc;
  constexpr bool kLogSumExp = kOut == GroupedOutput::LogSumExp;
  const RowGroups groups = group_rows(index, M, S);
  const uint32_t* order = groups.order.data();
  const int64_t row_bytes = C * static_cast<int64_t>(sizeof(T));
  constexpr int64_t kAhead = 8;  // rows prefetched ahead of the max pass
#pragma omp parallel
  {
    std::vector<F> max_row(static_cast<std::size_t>(C));
    std::vector<Acc> sum_row(static_cast<std::size_t>(C));
    std::vector<F> scale_row(static_cast<std::size_t>(C));
    std::vector<F> exp_row(static_cast<std::size_t>(C));
    for_each_group(groups, [&](int64_t s, int64_t begin, int64_t end, int64_t prefetch_end) {
      F* __restrict mx = max_row.data();
      Acc* __restrict z = sum_row.data();
      F* __restrict scale = scale_row.data();
      F* __restrict e = exp_row.data();
      for (int64_t c = 0; c < C; ++c) {
        mx[c] = -std::numeric_limits<F>::infinity();
        z[c] = Acc(0);
      }
      for (int64_t j = begin; j < end; ++j) {
        if (j + kAhead < prefetch_end) {
          prefetch_row(values, order[j + kAhead], row_bytes);
          if constexpr (!kLogSumExp) prefetch_row(out, order[j + kAhead], row_bytes);
        }
        const T* __restrict x = values + static_cast<int64_t>(order[j]) * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {  // a NaN, once met, stays: it is the group's max
          const F v = static_cast<F>(x[c]);
          mx[c] = (v > mx[c]) | (v != v) ? v : mx[c];
        }
      }
      for (int64_t j = begin; j < end; ++j) {
        const T* __restrict x = values + static_cast<int64_t>(order[j]) * C;
#pragma omp simd
        for (int64_t c = 0; c < C; ++c) {
          const F e = exp_of_nonpositive<F>(static_cast<F>(x[c]) - mx[c]);
          z[c] += static_cast<Acc>(T(kLogSumExp && e != e ? F(0) : e));
        }
      }
      if constexpr (kLogSumExp) {
        T* __restrict o = out + s * C;
        for (int64_t c = 0; c < C; ++c) o[c] = logsumexp_value(T(mx[c]), T(z[c]), eps);
      } else {
        for (int64_t c = 0; c < C; ++c) {
          scale[c] = kOut == GroupedOutput::Softmax ? static_cast<F>(T(z[c])) : static_cast<F>(log_of_sum(T(z[c]), eps));
          mx[c] = static_cast<F>(T(mx[c]));
        }
        for (int64_t j = begin; j < end; ++j) {
          const int64_t r = static_cast<int64_t>(order[j]) * C;
          const T* __restrict x = values + r;
          T* __restrict o = out + r;
          if constexpr (kOut == GroupedOutput::Softmax) {
            // The exponential again (cheaper than keeping it), rounded to T as the sum saw
            // it, in a float row: GCC does not vectorise a 16-bit store of it in one loop.
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) e[c] = static_cast<F>(T(exp_of_nonpositive<F>(static_cast<F>(x[c]) - mx[c])));
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) o[c] = T(e[c] / scale[c]);
          } else {
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) o[c] = T((static_cast<F>(x[c]) - mx[c]) - scale[c]);
          }
        }
      }
    });
  }
}

template <class T, class I>
void grouped_softmax_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, SoftmaxKind kind,
                         bool logsumexp, double eps, T* out) {
  if (logsumexp) return grouped_softmax_kind<GroupedOutput::LogSumExp>(values, index, M, C, S, eps, out);
  if (kind == SoftmaxKind::Softmax) return grouped_softmax_kind<GroupedOutput::Softmax>(values, index, M, C, S, eps, out);
  grouped_softmax_kind<GroupedOutput::LogSoftmax>(values, index, M, C, S, eps, out);
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                          \
  template void exponentials_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, bool, const T*, T*); \
  template void normalise_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, bool, const T*, T*,        \
                                    SoftmaxKind, double, T*);                                                 \
  template void grouped_softmax_cpu<T, I>(const T*, const I*, int64_t, int64_t, int64_t, SoftmaxKind, bool,     \
                                          double, T*);
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
