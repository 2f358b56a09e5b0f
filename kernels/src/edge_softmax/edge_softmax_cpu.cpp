// edge_softmax CPU driver (OpenMP): one thread per destination row (dynamic schedule for
// skewed degrees); the row is read once for the online max / sum, once to normalise,
// all heads together (the [deg, H] block is contiguous) when H <= kMaxFusedHeads.
// Rows are disjoint, so no atomics, and each (row, head) is reduced in edge order
// whatever the path: reproducible.
#include "edge_softmax/edge_softmax_backends.hpp"
#include "edge_softmax/edge_softmax_core.hpp"

namespace edgewise::edge_softmax_detail {

namespace {
constexpr int64_t kParallelMinWork = int64_t{1} << 14;
constexpr int64_t kMaxFusedHeads = 16;
}

template <class T>
void edge_softmax_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out) {
  const int64_t work = (offsets[rows] + rows) * heads;
#pragma omp parallel for schedule(dynamic, 64) if (work >= kParallelMinWork)
  for (int64_t v = 0; v < rows; ++v) {
    if (heads <= kMaxFusedHeads) {
      SoftmaxState<T> states[kMaxFusedHeads];
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        for (int64_t h = 0; h < heads; ++h) states[h].add(scores[e * heads + h]);
      }
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        for (int64_t h = 0; h < heads; ++h) out[e * heads + h] = states[h].probability(scores[e * heads + h]);
      }
      continue;
    }
    for (int64_t h = 0; h < heads; ++h) {
      SoftmaxState<T> state;
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) state.add(scores[e * heads + h]);
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) out[e * heads + h] = state.probability(scores[e * heads + h]);
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
EW_INSTANTIATE(double)
#undef EW_INSTANTIATE

}  // namespace edgewise::edge_softmax_detail
