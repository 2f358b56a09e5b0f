// Per-output moments of a scatter on CUDA (ScatterKind::Moments: var, std, and the
// mean their backward needs). A Welford accumulator is three numbers and cannot be
// updated by one atomic, so the moments come in two passes of atomicAdd:
//   1. count and sum per output -> a first mean m0 = sum / count;
//   2. per element d = v - m0: atomicAdd of d (the residual) and of d^2.
// Then mean = m0 + sum(d) / n and M2 = sum(d^2) - sum(d)^2 / n (exact identities
// about any m0). The squares are of deviations, never of raw values, so a large
// common offset does not cancel (unlike sum(v^2) - n mean^2); the residual pass
// also corrects m0 for the rounding of the first sum. Accumulated in F (T's float
// type; double for integer T, which the entry points reject anyway).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/context.hpp"

namespace edgewise::scatter_moments_detail {

template <class T, class I, class F>
__global__ void moments_sum_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total,
                                   int64_t cols, F* __restrict__ sum, unsigned long long* __restrict__ counts) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const int64_t s = static_cast<int64_t>(index[r]);
    atomicAdd(sum + s * cols + c, static_cast<F>(values[i]));
    if (c == 0) atomicAdd(counts + s, 1ull);
  }
}

template <class F>
__global__ void moments_divide_kernel(F* __restrict__ sum_to_mean, const unsigned long long* __restrict__ counts,
                                      int64_t outputs, int64_t cols) {
  for (int64_t i = detail::grid_thread_index(); i < outputs; i += detail::grid_thread_count()) {
    const unsigned long long n = counts[i / cols];
    sum_to_mean[i] = n > 0 ? sum_to_mean[i] / static_cast<F>(n) : F(0);
  }
}

template <class T, class I, class F>
__global__ void moments_residual_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total,
                                        int64_t cols, const F* __restrict__ mean0, F* __restrict__ residual,
                                        F* __restrict__ squares) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t o = static_cast<int64_t>(index[r]) * cols + (i - r * cols);
    const F d = static_cast<F>(values[i]) - mean0[o];
    atomicAdd(residual + o, d);
    if (squares != nullptr) atomicAdd(squares + o, d * d);
  }
}

// Device arrays of the moments, [S] counts and [S, C] sums, filled by compute().
template <class F>
struct ScatterMoments {
  unsigned long long* counts = nullptr;
  F* mean0 = nullptr;     // first mean
  F* residual = nullptr;  // sum of v - mean0
  F* squares = nullptr;   // sum of (v - mean0)^2 (when asked for)

  // Scratch from ctx (ctx.scratch is not used by anything else in between).
  template <class T, class I>
  void compute(const T* values, const I* index, int64_t M, int64_t S, int64_t C, bool with_squares, Context& ctx,
               cudaStream_t stream) {
    constexpr int kThreads = 256;
    ScratchLayout layout;
    const size_t counts_at = layout.add<unsigned long long>(S);
    const size_t mean_at = layout.add<F>(S * C);
    const size_t residual_at = layout.add<F>(S * C);
    const size_t squares_at = layout.add<F>(with_squares ? S * C : 0);
    void* base = ctx.scratch(layout.bytes());
    EW_CUDA_CHECK(cudaMemsetAsync(base, 0, layout.bytes(), stream));
    counts = ScratchLayout::at<unsigned long long>(base, counts_at);
    mean0 = ScratchLayout::at<F>(base, mean_at);
    residual = ScratchLayout::at<F>(base, residual_at);
    squares = with_squares ? ScratchLayout::at<F>(base, squares_at) : nullptr;
    const int64_t total = M * C, outputs = S * C;
    if (total > 0) {
      moments_sum_kernel<<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(values, index, total, C, mean0,
                                                                                     counts);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
    moments_divide_kernel<<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(mean0, counts, outputs, C);
    EW_CUDA_CHECK_LAUNCH(stream);
    if (total > 0) {
      moments_residual_kernel<<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
          values, index, total, C, mean0, residual, squares);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
  }
};

// The corrected mean and M2 of output element o from the arrays above.
template <class F>
__device__ __forceinline__ void moments_of(const ScatterMoments<F>& m, int64_t o, int64_t cols, F& n, F& mean, F& m2) {
  n = static_cast<F>(m.counts[o / cols]);
  const F r = m.residual[o];
  mean = n > F(0) ? m.mean0[o] + r / n : F(0);
  m2 = (m.squares != nullptr && n > F(0)) ? m.squares[o] - r * r / n : F(0);
  m2 = m2 > F(0) ? m2 : F(0);
}

}  // namespace edgewise::scatter_moments_detail
