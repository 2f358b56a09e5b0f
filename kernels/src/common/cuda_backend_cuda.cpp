// CUDA runtime implementation of cuda_backend.hpp (built when EDGEWISE_CUDA is on).
#include <cuda_runtime_api.h>

#include "common/cuda_backend.hpp"
#include "common/cuda_check.hpp"

namespace edgewise::detail {

namespace {
cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

cudaMemcpyKind as_kind(CopyKind kind) {
  switch (kind) {
    case CopyKind::HostToHost: return cudaMemcpyHostToHost;
    case CopyKind::HostToDevice: return cudaMemcpyHostToDevice;
    case CopyKind::DeviceToHost: return cudaMemcpyDeviceToHost;
    case CopyKind::DeviceToDevice: return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}
}  // namespace

int cuda_device_count(std::string* reason) noexcept {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (reason)
      *reason = concat("the CUDA runtime reports ", cudaGetErrorName(status), ": ", cudaGetErrorString(status));
    return 0;
  }
  if (count == 0 && reason) *reason = "no CUDA device present";
  return count;
}

void* cuda_malloc(std::size_t bytes, int device) {
  EW_CUDA_CHECK(cudaSetDevice(device));
  void* ptr = nullptr;
  EW_CUDA_CHECK(cudaMalloc(&ptr, bytes));
  return ptr;
}

void cuda_free(void* ptr, int device) noexcept {
  if (cudaSetDevice(device) != cudaSuccess) return;
  cudaError_t status = cudaFree(ptr);
  // At process exit the runtime may already be unloading: nothing left to free.
  if (status != cudaSuccess && status != cudaErrorCudartUnloading) (void)cudaGetLastError();
}

void cuda_memcpy(void* dst, const void* src, std::size_t bytes, CopyKind kind, int device,
                 void* stream) {
  EW_CUDA_CHECK(cudaSetDevice(device));
  EW_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, as_kind(kind), as_stream(stream)));
  EW_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

void cuda_memset_async(void* dst, int byte_value, std::size_t bytes, int device, void* stream) {
  EW_CUDA_CHECK(cudaSetDevice(device));
  EW_CUDA_CHECK(cudaMemsetAsync(dst, byte_value, bytes, as_stream(stream)));
}

void cuda_stream_synchronize(int device, void* stream) {
  EW_CUDA_CHECK(cudaSetDevice(device));
  EW_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

void* cuda_host_alloc(std::size_t bytes) noexcept {
  void* ptr = nullptr;
  if (cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return ptr;
}

void cuda_host_free(void* ptr) noexcept {
  cudaError_t status = cudaFreeHost(ptr);
  if (status != cudaSuccess) (void)cudaGetLastError();
}

}  // namespace edgewise::detail
