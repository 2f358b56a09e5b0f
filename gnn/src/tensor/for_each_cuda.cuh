// Launching the engine's own CUDA kernels: the kernels' public launch helpers
// (edgewise/kernels/cuda/launch.cuh), plus the stream engine work on a device goes to.
#pragma once

#include <cuda_runtime.h>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"

namespace edgewise::gnn::cuda_launch {

using ::edgewise::detail::copy_to_host;
using ::edgewise::detail::for_each;
using ::edgewise::detail::grid_size;
using ::edgewise::detail::grid_thread_count;
using ::edgewise::detail::grid_thread_index;
using ::edgewise::detail::kBlock;

// Makes `device` current and returns the stream engine work on it goes to.
inline cudaStream_t on_device(Device device) {
  EW_CUDA_CHECK(cudaSetDevice(device.index));
  return static_cast<cudaStream_t>(engine_stream(device));
}

}  // namespace edgewise::gnn::cuda_launch
