// edge_softmax CPU driver (OpenMP): one thread per destination row (dynamic schedule for
// skewed degrees). Forward, per row and head: the max, then exp(s - max) written out
// and summed, then out /= sum — three passes over the row's [deg, H] block, which is
// contiguous and stays in L1, so the row is read from memory once. Float uses
// exp_nonpositive (vectorised; libm's expf is a call per element, and an online
// max-and-rescale needs two exps per element: 8x slower measured at E = 2M, H = 8).
// Heads up to kMaxFusedHeads go together, wider ones one at a time. Rows are disjoint,
// so no atomics, and each (row, head) is reduced in edge order whatever the path:
// reproducible.
#include <type_traits>

#include "edge_softmax/edge_softmax_backends.hpp"
#include "edge_softmax/edge_softmax_core.hpp"
#include "edgewise/kernels/common/exp_nonpositive.hpp"

namespace edgewise::edge_softmax_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {
constexpr int64_t kParallelMinWork = int64_t{1} << 14;
constexpr int64_t kMaxFusedHeads = 16;

template <class T>
inline T exp_of_nonpositive(T x) {
  if constexpr (sizeof(T) == 4) {
    return detail::exp_nonpositive(x);
  } else {
    return exp_of(x);
  }
}

// Softmax over `count` entries of `heads` interleaved heads (stride `heads`) starting at
// scores/out: each head's max, then the exps and their sum, then the division
// (edge_softmax_core.hpp: how NaN and infinities come out).
template <class T, class Heads>
inline void softmax_block(int64_t count, Heads heads, const T* __restrict scores, T* __restrict out) {
  T max[kMaxFusedHeads];
  T sum[kMaxFusedHeads];
  for (int64_t h = 0; h < heads; ++h) {
    max[h] = softmax_max_identity<T>();
    sum[h] = T(0);
  }
  for (int64_t e = 0; e < count; ++e) {
#pragma omp simd
    for (int64_t h = 0; h < heads; ++h) max[h] = softmax_max(max[h], scores[e * heads + h]);
  }
  for (int64_t e = 0; e < count; ++e) {
#pragma omp simd
    for (int64_t h = 0; h < heads; ++h) {
      const T x = exp_of_nonpositive(scores[e * heads + h] - max[h]);
      out[e * heads + h] = x;
      sum[h] += x;
    }
  }
  for (int64_t e = 0; e < count; ++e) {
#pragma omp simd
    for (int64_t h = 0; h < heads; ++h) out[e * heads + h] /= sum[h];
  }
}

// One head of `heads` (stride `heads`), for rows with more heads than kMaxFusedHeads.
template <class T>
inline void softmax_strided(int64_t count, int64_t heads, const T* __restrict scores, T* __restrict out) {
  T max = softmax_max_identity<T>();
  for (int64_t e = 0; e < count; ++e) max = softmax_max(max, scores[e * heads]);
  T sum = T(0);
  for (int64_t e = 0; e < count; ++e) {
    out[e * heads] = exp_of_nonpositive(scores[e * heads] - max);
    sum += out[e * heads];
  }
  for (int64_t e = 0; e < count; ++e) out[e * heads] /= sum;
}
}  // namespace

template <class T>
void edge_softmax_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out) {
  const int64_t work = (offsets[rows] + rows) * heads;
#pragma omp parallel for schedule(dynamic, 64) if (work >= kParallelMinWork)
  for (int64_t v = 0; v < rows; ++v) {
    const int64_t begin = offsets[v], count = offsets[v + 1] - offsets[v];
    if (count == 0) continue;
    if (heads == 8) {  // GAT's usual head count: a compile-time width keeps max and sum in registers
      softmax_block(count, std::integral_constant<int64_t, 8>{}, scores + begin * heads, out + begin * heads);
    } else if (heads <= kMaxFusedHeads) {
      softmax_block(count, heads, scores + begin * heads, out + begin * heads);
    } else {
      for (int64_t h = 0; h < heads; ++h) softmax_strided(count, heads, scores + begin * heads + h, out + begin * heads + h);
    }
  }
}

template <class T>
void edge_softmax_backward_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                               T* grad_scores) {
  const int64_t work = (offsets[rows] + rows) * heads;
#pragma omp parallel for schedule(dynamic, 64) if (work >= kParallelMinWork)
  for (int64_t v = 0; v < rows; ++v) {
    if (heads <= kMaxFusedHeads) {
      T dots[kMaxFusedHeads] = {};
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        for (int64_t h = 0; h < heads; ++h) dots[h] += grad_out[e * heads + h] * out[e * heads + h];
      }
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t i = e * heads + h;
          grad_scores[i] = out[i] * (grad_out[i] - dots[h]);
        }
      }
      continue;
    }
    for (int64_t h = 0; h < heads; ++h) {
      T dot = T(0);
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) dot += grad_out[e * heads + h] * out[e * heads + h];
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        const int64_t i = e * heads + h;
        grad_scores[i] = out[i] * (grad_out[i] - dot);
      }
    }
  }
}

#define EW_INSTANTIATE(T)                                                                  \
  template void edge_softmax_cpu<T>(const int64_t*, int64_t, int64_t, const T*, T*);       \
  template void edge_softmax_backward_cpu<T>(const int64_t*, int64_t, int64_t, const T*, const T*, T*);
EW_INSTANTIATE(float)
#if EW_CPU_ISA_LEVEL == 0  // double: baseline copy only (kIsaDispatchedElement)
EW_INSTANTIATE(double)
#endif
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::edge_softmax_detail
