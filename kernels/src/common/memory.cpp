// Allocation and copies across CPU and CUDA devices.
#include "edgewise/kernels/common/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "common/cuda_backend.hpp"

namespace edgewise {

namespace {
constexpr std::size_t kHostAlignment = 64;
}

void* device_allocate(std::size_t bytes, Device device) {
  if (bytes == 0) return nullptr;
  if (device.is_cuda()) return detail::cuda_malloc(bytes, device.index);
  std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* ptr = std::aligned_alloc(kHostAlignment, rounded);
  if (!ptr) throw std::bad_alloc();
  return ptr;
}

void device_free(void* ptr, Device device) noexcept {
  if (!ptr) return;
  if (device.is_cuda()) {
    detail::cuda_free(ptr, device.index);
  } else {
    std::free(ptr);
  }
}

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, std::size_t bytes,
                void* stream) {
  if (bytes == 0) return;
  if (dst_device.is_cpu() && src_device.is_cpu()) {
    std::memcpy(dst, src, bytes);
    return;
  }
  using detail::CopyKind;
  CopyKind kind = dst_device.is_cpu()   ? CopyKind::DeviceToHost
                  : src_device.is_cpu() ? CopyKind::HostToDevice
                                        : CopyKind::DeviceToDevice;
  int device = dst_device.is_cuda() ? dst_device.index : src_device.index;
  detail::cuda_memcpy(dst, src, bytes, kind, device, stream);
}

void fill_bytes(void* dst, Device device, int byte_value, std::size_t bytes, void* stream) {
  if (bytes == 0) return;
  if (device.is_cpu()) {
    std::memset(dst, byte_value, bytes);
  } else {
    detail::cuda_memset_async(dst, byte_value, bytes, device.index, stream);
  }
}

void synchronize(Device device, void* stream) {
  if (device.is_cuda()) detail::cuda_stream_synchronize(device.index, stream);
}

}  // namespace edgewise
