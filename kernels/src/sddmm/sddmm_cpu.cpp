// sddmm CPU driver (OpenMP). The per-edge forms are parallel over fixed chunks of edges
// (balanced by edges, so a hub row does not serialise a thread); each chunk finds its
// first row by binary search and walks the offsets. edge_gather_sum is parallel over
// output rows: each row is owned by one thread, so there are no atomics, and every
// element is summed in edge order whatever the thread count.
#include <algorithm>
#include <vector>

#include "edgewise/kernels/common/bounds.hpp"
#include "sddmm/sddmm_backends.hpp"

namespace edgewise::sddmm_detail {

namespace {

constexpr int64_t kEdgeChunk = 4096;
// Below this much work one thread does it: a parallel region costs more than it saves.
constexpr int64_t kParallelMinWork = int64_t{1} << 15;

// Calls f(e, v) for every edge e with its destination row v, in parallel edge chunks.
template <class I, class F>
void for_each_edge(const EdgeCsr<I>& g, int64_t work_per_edge, F f) {
  const int64_t chunks = (g.edges + kEdgeChunk - 1) / kEdgeChunk;
#pragma omp parallel for schedule(static) if (g.edges * work_per_edge >= kParallelMinWork)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t begin = c * kEdgeChunk;
    const int64_t end = std::min(g.edges, begin + kEdgeChunk);
    int64_t v = upper_bound_index(g.offsets, 0, g.rows + 1, begin) - 1;
    for (int64_t e = begin; e < end; ++e) {
      while (g.offsets[v + 1] <= e) ++v;
      f(e, v);
    }
  }
}

}  // namespace

template <class T, class I>
void sddmm_dot_cpu(const EdgeCsr<I>& g, const T* x, const T* y, int64_t heads, int64_t d, T* out) {
  const int64_t cols = heads * d;
  for_each_edge(g, cols, [&](int64_t e, int64_t v) {
    const T* x_row = x + static_cast<int64_t>(g.indices[e]) * cols;
    const T* y_row = y + v * cols;
    for (int64_t h = 0; h < heads; ++h) out[e * heads + h] = dot_edge(x_row + h * d, y_row + h * d, d);
  });
}

template <class T, class I>
void sddmm_add_cpu(const EdgeCsr<I>& g, const T* a, const T* b, int64_t heads, T* out) {
  for_each_edge(g, heads, [&](int64_t e, int64_t v) {
    const T* a_row = a + static_cast<int64_t>(g.indices[e]) * heads;
    const T* b_row = b + v * heads;
    for (int64_t h = 0; h < heads; ++h) out[e * heads + h] = a_row[h] + b_row[h];
  });
}

template <class T, class I>
void edge_gather_sum_cpu(const GatherSum<T, I>& args, int64_t rows, T* out) {
  const int64_t cols = args.heads * args.d;
  const int64_t edges = args.offsets[rows];
#pragma omp parallel for schedule(dynamic, 64) if ((edges + rows) * cols >= kParallelMinWork)
  for (int64_t v = 0; v < rows; ++v) {
    T* row = out + v * cols;
    std::fill(row, row + cols, T(0));
    // Edge-major accumulation into the row: the same per-element order (edge order) as
    // GatherSum::element, with contiguous loads of x.
    for (int64_t k = args.offsets[v]; k < args.offsets[v + 1]; ++k) {
      const int64_t id = args.edge_ids != nullptr ? args.edge_ids[k] : k;
      const T* w_row = args.w + id * args.heads;
      if (args.x == nullptr) {
        for (int64_t h = 0; h < args.heads; ++h) row[h] += w_row[h];
        continue;
      }
      const T* x_row = args.x + static_cast<int64_t>(args.indices[k]) * cols;
      for (int64_t h = 0; h < args.heads; ++h) {
        const T wk = w_row[h];
        for (int64_t j = h * args.d; j < (h + 1) * args.d; ++j) row[j] += wk * x_row[j];
      }
    }
  }
}

#define EW_INSTANTIATE(T, I)                                                                              \
  template void sddmm_dot_cpu<T, I>(const EdgeCsr<I>&, const T*, const T*, int64_t, int64_t, T*);         \
  template void sddmm_add_cpu<T, I>(const EdgeCsr<I>&, const T*, const T*, int64_t, T*);                  \
  template void edge_gather_sum_cpu<T, I>(const GatherSum<T, I>&, int64_t, T*);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::sddmm_detail
