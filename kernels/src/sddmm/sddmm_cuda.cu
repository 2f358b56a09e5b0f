// sddmm CUDA driver. The per-edge forms run one thread per (edge, head), each finding
// its destination row by binary search on the offsets (no per-row work, so hubs cost
// nothing extra). edge_gather_sum runs one thread per output element, summing its
// row's edges in edge order: no atomics, bitwise reproducible. Hub rows serialise one
// thread per element; a split like spmm's pieces is the next step if that shows up in
// edgewise-bench.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/bounds.hpp"
#include "sddmm/sddmm_backends.hpp"

namespace edgewise::sddmm_detail {

namespace {

constexpr int kThreads = 256;

template <class T, class I>
__global__ void sddmm_dot_kernel(EdgeCsr<I> g, const T* __restrict__ x, const T* __restrict__ y, int64_t heads,
                                 int64_t d, T* __restrict__ out) {
  const int64_t cols = heads * d;
  for (int64_t i = detail::grid_thread_index(); i < g.edges * heads; i += detail::grid_thread_count()) {
    const int64_t e = i / heads;
    const int64_t h = i % heads;
    const int64_t v = upper_bound_index(g.offsets, 0, g.rows + 1, e) - 1;
    out[i] = dot_edge(x + static_cast<int64_t>(g.indices[e]) * cols + h * d, y + v * cols + h * d, d);
  }
}

template <class T, class I>
__global__ void sddmm_add_kernel(EdgeCsr<I> g, const T* __restrict__ a, const T* __restrict__ b, int64_t heads,
                                 T* __restrict__ out) {
  for (int64_t i = detail::grid_thread_index(); i < g.edges * heads; i += detail::grid_thread_count()) {
    const int64_t e = i / heads;
    const int64_t h = i % heads;
    const int64_t v = upper_bound_index(g.offsets, 0, g.rows + 1, e) - 1;
    out[i] = a[static_cast<int64_t>(g.indices[e]) * heads + h] + b[v * heads + h];
  }
}

template <class T, class I>
__global__ void edge_gather_sum_kernel(GatherSum<T, I> args, int64_t rows, T* __restrict__ out) {
  const int64_t cols = args.heads * args.d;
  for (int64_t i = detail::grid_thread_index(); i < rows * cols; i += detail::grid_thread_count()) {
    out[i] = args.element(i / cols, i % cols);
  }
}

}  // namespace

template <class T, class I>
void sddmm_dot_cuda(const EdgeCsr<I>& g, const T* x, const T* y, int64_t heads, int64_t d, T* out, Context& ctx) {
  if (g.edges == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  sddmm_dot_kernel<T, I><<<detail::grid_size(g.edges * heads, kThreads), kThreads, 0, stream>>>(g, x, y, heads, d,
                                                                                                  out);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class T, class I>
void sddmm_add_cuda(const EdgeCsr<I>& g, const T* a, const T* b, int64_t heads, T* out, Context& ctx) {
  if (g.edges == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  sddmm_add_kernel<T, I><<<detail::grid_size(g.edges * heads, kThreads), kThreads, 0, stream>>>(g, a, b, heads, out);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class T, class I>
void edge_gather_sum_cuda(const GatherSum<T, I>& args, int64_t rows, T* out, Context& ctx) {
  const int64_t n = rows * args.heads * args.d;
  if (n == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  edge_gather_sum_kernel<T, I><<<detail::grid_size(n, kThreads), kThreads, 0, stream>>>(args, rows, out);
  EW_CUDA_CHECK_LAUNCH(stream);
}

#define EW_INSTANTIATE(T, I)                                                                                   \
  template void sddmm_dot_cuda<T, I>(const EdgeCsr<I>&, const T*, const T*, int64_t, int64_t, T*, Context&);   \
  template void sddmm_add_cuda<T, I>(const EdgeCsr<I>&, const T*, const T*, int64_t, T*, Context&);            \
  template void edge_gather_sum_cuda<T, I>(const GatherSum<T, I>&, int64_t, T*, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::sddmm_detail
