// Allocation and copies across CPU and CUDA devices.
#include "edgewise/kernels/common/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

#include "common/cuda_backend.hpp"

namespace edgewise {

namespace {
constexpr std::size_t kHostAlignment = 64;

// Allocation statistics per (device type, index). Allocations are coarse (whole
// buffers), so a mutex-protected map is cheap enough and keeps free() sizeless.
struct Tracker {
  std::mutex mutex;
  std::unordered_map<const void*, std::size_t> sizes;
  std::map<std::pair<int, int>, MemoryStats> stats;

  static std::pair<int, int> key(Device d) { return {static_cast<int>(d.type), d.index}; }
  void on_allocate(const void* ptr, std::size_t bytes, Device d) {
    std::lock_guard<std::mutex> lock(mutex);
    sizes[ptr] = bytes;
    MemoryStats& s = stats[key(d)];
    s.current_bytes += bytes;
    s.peak_bytes = std::max(s.peak_bytes, s.current_bytes);
  }
  void on_free(const void* ptr, Device d) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.find(ptr);
    if (it == sizes.end()) return;
    stats[key(d)].current_bytes -= it->second;
    sizes.erase(it);
  }
};

Tracker& tracker() {
  static Tracker* t = new Tracker();  // never destroyed: buffers may be freed during exit
  return *t;
}
}  // namespace

MemoryStats memory_stats(Device device) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.stats[Tracker::key(device)];
}

void reset_peak_memory(Device device) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  MemoryStats& s = t.stats[Tracker::key(device)];
  s.peak_bytes = s.current_bytes;
}

void* device_allocate(std::size_t bytes, Device device) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  if (device.is_cuda()) {
    ptr = detail::cuda_malloc(bytes, device.index);
  } else {
    std::size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    ptr = std::aligned_alloc(kHostAlignment, rounded);
    if (!ptr) throw std::bad_alloc();
  }
  tracker().on_allocate(ptr, bytes, device);
  return ptr;
}

void device_free(void* ptr, Device device) noexcept {
  if (!ptr) return;
  tracker().on_free(ptr, device);
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
