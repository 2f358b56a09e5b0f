// Launch helpers for our kernels: 64-bit grid-stride indices and grid sizing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

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

}  // namespace edgewise::detail
