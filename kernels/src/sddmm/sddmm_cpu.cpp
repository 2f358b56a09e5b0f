// sddmm CPU driver (OpenMP). The per-edge forms are parallel over fixed chunks of edges
// (balanced by edges, so a hub row does not serialise a thread); each chunk finds its
// first row by binary search and walks the offsets. edge_gather_sum is parallel over
// output rows: each row is owned by one thread, so there are no atomics, and every
// element is summed in edge order whatever the thread count. The per-head width D is a
// compile-time constant for the common widths (accumulators stay in registers, loops
// vectorise), and gathered rows are prefetched some edges ahead (gathers are
// latency-bound), across row boundaries: most rows have fewer edges than the distance.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/common/bounds.hpp"
#include "sddmm/sddmm_backends.hpp"

namespace edgewise::sddmm_detail {

namespace {

constexpr int64_t kEdgeChunk = 4096;
// Below this much work one thread does it: a parallel region costs more than it saves.
constexpr int64_t kParallelMinWork = int64_t{1} << 15;
constexpr int64_t kPrefetchEdges = 16;
constexpr int64_t kRowChunk = 64;  // edge_gather_sum's rows per scheduling unit

// Calls f(std::integral_constant<int64_t, D>) for a common width d, else with D = 0.
template <class F>
void with_width(int64_t d, F f) {
  switch (d) {
    case 1: return f(std::integral_constant<int64_t, 1>{});
    case 2: return f(std::integral_constant<int64_t, 2>{});
    case 4: return f(std::integral_constant<int64_t, 4>{});
    case 8: return f(std::integral_constant<int64_t, 8>{});
    case 16: return f(std::integral_constant<int64_t, 16>{});
    case 32: return f(std::integral_constant<int64_t, 32>{});
    case 64: return f(std::integral_constant<int64_t, 64>{});
    default: return f(std::integral_constant<int64_t, 0>{});
  }
}

template <class T>
[[gnu::always_inline]] inline void prefetch_row(const T* p, int64_t n) {
  for (int64_t k = 0; k < n; k += static_cast<int64_t>(64 / sizeof(T))) __builtin_prefetch(p + k, 0, 3);
}

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
  with_width(d, [&](auto width) {
    constexpr int64_t kD = decltype(width)::value;
    for_each_edge(g, cols, [&](int64_t e, int64_t v) {
      if (e + kPrefetchEdges < g.edges) prefetch_row(x + static_cast<int64_t>(g.indices[e + kPrefetchEdges]) * cols, cols);
      const T* x_row = x + static_cast<int64_t>(g.indices[e]) * cols;
      const T* y_row = y + v * cols;
      for (int64_t h = 0; h < heads; ++h) out[e * heads + h] = dot_edge<kD>(x_row + h * d, y_row + h * d, d);
    });
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

// Row v of edge_gather_sum with heads and width fixed at compile time: the H x D
// accumulators stay in registers (the generic loop below adds into the output row in
// memory, a load and a store per element per edge). Same per-element order.
template <int64_t kH, int64_t kD, class T, class I>
void gather_sum_row_fixed(const GatherSum<T, I>& args, int64_t v, int64_t prefetch_end, T* __restrict__ out_row) {
  constexpr int64_t kC = kH * kD;
  T acc[kC] = {};
  const int64_t end = args.offsets[v + 1];
  for (int64_t k = args.offsets[v]; k < end; ++k) {
    if (k + kPrefetchEdges < prefetch_end) {
      prefetch_row(args.x + static_cast<int64_t>(args.indices[k + kPrefetchEdges]) * kC, kC);
    }
    const int64_t id = args.edge_ids != nullptr ? args.edge_ids[k] : k;
    const T* w_row = args.w + id * kH;
    const T* __restrict__ x_row = args.x + static_cast<int64_t>(args.indices[k]) * kC;
    for (int64_t h = 0; h < kH; ++h) {
      const T wk = w_row[h];
#pragma omp simd
      for (int64_t j = 0; j < kD; ++j) acc[h * kD + j] += wk * x_row[h * kD + j];
    }
  }
  for (int64_t c = 0; c < kC; ++c) out_row[c] = acc[c];
}

// Row v of edge_gather_sum for any heads (and width kD, or d at run time when kD is 0).
template <int64_t kD, class T, class I>
void gather_sum_row(const GatherSum<T, I>& args, int64_t v, int64_t prefetch_end, T* __restrict__ row) {
  const int64_t d = kD > 0 ? kD : args.d;
  const int64_t cols = args.heads * d;
  std::fill(row, row + cols, T(0));
  const int64_t end = args.offsets[v + 1];
  // Edge-major accumulation into the row: the same per-element order (edge order) as
  // GatherSum::element, with contiguous loads of x.
  for (int64_t k = args.offsets[v]; k < end; ++k) {
    const int64_t id = args.edge_ids != nullptr ? args.edge_ids[k] : k;
    const T* w_row = args.w + id * args.heads;
    if (args.x == nullptr) {
      for (int64_t h = 0; h < args.heads; ++h) row[h] += w_row[h];
      continue;
    }
    if (k + kPrefetchEdges < prefetch_end) {
      prefetch_row(args.x + static_cast<int64_t>(args.indices[k + kPrefetchEdges]) * cols, cols);
    }
    const T* __restrict__ x_row = args.x + static_cast<int64_t>(args.indices[k]) * cols;
    for (int64_t h = 0; h < args.heads; ++h) {
      const T wk = w_row[h];
      T* __restrict__ r = row + h * d;
      const T* __restrict__ xr = x_row + h * d;
#pragma omp simd
      for (int64_t j = 0; j < d; ++j) r[j] += wk * xr[j];
    }
  }
}

template <class T, class I>
void edge_gather_sum_cpu(const GatherSum<T, I>& args, int64_t rows, T* out) {
  const int64_t cols = args.heads * args.d;
  const int64_t edges = args.offsets[rows];
  // Rows in chunks taken dynamically (skewed degrees); gathered rows are prefetched
  // across row boundaries up to the chunk's last edge, since most rows are shorter than
  // the prefetch distance.
  auto run = [&](auto row_kernel) {
    const int64_t chunks = (rows + kRowChunk - 1) / kRowChunk;
#pragma omp parallel for schedule(dynamic, 1) if ((edges + rows) * cols >= kParallelMinWork)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t first = c * kRowChunk, last = std::min(rows, first + kRowChunk);
      for (int64_t v = first; v < last; ++v) row_kernel(v, args.offsets[last], out + v * cols);
    }
  };
  // GAT's shapes: 8 heads of 8 or 16 features (hidden layers), one head (output layers).
  if (args.x != nullptr && args.heads == 8 && args.d == 8) {
    return run([&](int64_t v, int64_t prefetch_end, T* row) { gather_sum_row_fixed<8, 8>(args, v, prefetch_end, row); });
  }
  if (args.x != nullptr && args.heads == 8 && args.d == 16) {
    return run([&](int64_t v, int64_t prefetch_end, T* row) { gather_sum_row_fixed<8, 16>(args, v, prefetch_end, row); });
  }
  with_width(args.d, [&](auto width) {
    constexpr int64_t kD = decltype(width)::value;
    if constexpr (kD >= 8) {
      if (args.x != nullptr && args.heads == 1) {
        return run([&](int64_t v, int64_t prefetch_end, T* row) { gather_sum_row_fixed<1, kD>(args, v, prefetch_end, row); });
      }
    }
    run([&](int64_t v, int64_t prefetch_end, T* row) { gather_sum_row<kD>(args, v, prefetch_end, row); });
  });
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
