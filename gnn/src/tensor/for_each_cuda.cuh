// Launching the engine's own CUDA kernels: grid-stride loops over [0, n) queued on
// the engine's stream for a device (stream.hpp). The engine's kernels are
// elementwise or per-row, so one launcher of a device functor serves them all.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/cuda_check.hpp"

namespace edgewise::gnn::cuda_launch {

constexpr int kBlock = 256;
// Enough blocks to fill any device several times over; grid-stride loops do the rest.
constexpr int64_t kMaxGrid = 65535LL * 32;

inline unsigned grid_size(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kBlock - 1) / kBlock, 1, kMaxGrid));
}

__device__ __forceinline__ int64_t grid_thread_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_thread_count() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// Makes `device` current and returns the stream engine work on it goes to.
inline cudaStream_t on_device(Device device) {
  EW_CUDA_CHECK(cudaSetDevice(device.index));
  return static_cast<cudaStream_t>(engine_stream(device));
}

template <class F>
__global__ void for_each_kernel(int64_t n, F f) {
  for (int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) f(i);
}

// Runs f(i) for every i in [0, n) on `stream` (asynchronously).
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

}  // namespace edgewise::gnn::cuda_launch
