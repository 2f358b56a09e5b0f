// gather_rows CUDA driver: one thread per output element (grid-stride), so a warp
// writes consecutive columns of a row; the element's source comes from the shared
// csr_element / coo_element (gather_rows_core.hpp), which the CPU tests exercise
// through segment_of_row. A pure copy: a binary search per element of a CSR spread
// costs a few cached loads next to the row's global read and write.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "gather_rows/gather_rows_backends.hpp"

namespace edgewise::gather_rows_detail {

namespace {

template <class W>
__global__ void gather_rows_csr_kernel(CsrSpread<W> p, int64_t n) {
  for (int64_t o = detail::grid_thread_index(); o < n; o += detail::grid_thread_count()) p.out[o] = csr_element(p, o);
}

template <class W, class I>
__global__ void gather_rows_coo_kernel(CooPick<W, I> p, int64_t n) {
  for (int64_t o = detail::grid_thread_index(); o < n; o += detail::grid_thread_count()) p.out[o] = coo_element(p, o);
}

__global__ void first_bad_offset_kernel(const int64_t* __restrict__ offsets, int64_t rows, int64_t S, int64_t M,
                                        unsigned long long* __restrict__ d_first_bad) {
  const int64_t n = rows * (S + 1);
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    const int64_t row = i / (S + 1), s = i - row * (S + 1);
    if (!offset_ok(offsets + row * (S + 1), s, M)) atomicMin(d_first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace

template <class W>
void gather_rows_csr_cuda(const CsrSpread<W>& p, Context& ctx) {
  const int64_t n = p.batches * p.M * p.C;
  if (n == 0) return;
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  gather_rows_csr_kernel<W><<<detail::grid_size(n), detail::kBlock, 0, stream>>>(p, n);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class W, class I>
void gather_rows_coo_cuda(const CooPick<W, I>& p, Context& ctx) {
  const int64_t n = p.batches * p.E * p.C;
  if (n == 0) return;
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  gather_rows_coo_kernel<W, I><<<detail::grid_size(n), detail::kBlock, 0, stream>>>(p, n);
  EW_CUDA_CHECK_LAUNCH(stream);
}

int64_t first_bad_offset_cuda(const int64_t* offsets, int64_t rows, int64_t S, int64_t M, Context& ctx) {
  const int64_t n = rows * (S + 1);
  if (n == 0) return -1;
  cudaStream_t stream = detail::as_stream(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  first_bad_offset_kernel<<<detail::grid_size(n), detail::kBlock, 0, stream>>>(offsets, rows, S, M, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  detail::copy_to_host(&h_first_bad, d_first_bad, 1, stream);
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

#define EW_INSTANTIATE(W)                                                                 \
  template void gather_rows_csr_cuda<W>(const CsrSpread<W>&, Context&);                 \
  template void gather_rows_coo_cuda<W, int32_t>(const CooPick<W, int32_t>&, Context&); \
  template void gather_rows_coo_cuda<W, int64_t>(const CooPick<W, int64_t>&, Context&);
EW_INSTANTIATE(uint16_t)
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(uint64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::gather_rows_detail
