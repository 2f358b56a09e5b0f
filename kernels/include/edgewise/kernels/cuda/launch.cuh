// Launch helpers for CUDA kernels built on Edgewise: 64-bit grid-stride indices, grid
// sizing, a grid-stride for_each over a device functor and a synchronous copy to the
// host. Public on purpose: the kernels and the engine's own CUDA code (and extensions)
// share these, never copies of them. CUDA translation units only (nvcc).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "edgewise/kernels/common/cuda_check.hpp"

namespace edgewise::detail {

constexpr int kBlock = 256;
// Enough blocks to cover the device several times over; grid-stride loops do the rest.
constexpr int64_t kMaxGrid = 65535LL * 32;

inline cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

// Blocks for n work items of `per_block` each (at least 1, capped; loops stride).
inline unsigned grid_size(int64_t n, int64_t per_block) {
  int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxGrid));
}

__device__ __forceinline__ int64_t grid_thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_thread_count() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Blocks of kBlock threads for n elementwise work items.
inline unsigned grid_size(int64_t n) { return grid_size(n, kBlock); }

template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  for (int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) f(i);
}

// Runs f(i) for every i in [0, n) on `stream` (asynchronously); f a device functor
// captured by value.
template <class F>
void for_each(cudaStream_t stream, int64_t n, F f) {
  if (n == 0) return;
  for_each_kernel<<<grid_size(n), kBlock, 0, stream>>>(n, f);
  EW_CUDA_CHECK_LAUNCH(stream);
}

// Copies n elements from the device to the host on `stream` and waits for them.
template <class T>
void copy_to_host(T* h_out, const T* d_in, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  EW_CUDA_CHECK(cudaMemcpyAsync(h_out, d_in, sizeof(T) * static_cast<size_t>(n), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace edgewise::detail
