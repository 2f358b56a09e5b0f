// Allocation and copies across CPU and CUDA devices.
#include "edgewise/kernels/common/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <map>
#include <mutex>
#include <new>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/cuda_backend.hpp"

namespace edgewise {

namespace {
constexpr std::size_t kHostAlignment = 64;
constexpr std::size_t kHostCacheMinBytes = std::size_t{256} << 10;  // smaller blocks: malloc's heap does well
constexpr std::size_t kHostCacheGranule = std::size_t{64} << 10;    // rounding of cached sizes
// A cached block serves a request up to this fraction (1 / kHostCacheSlack) smaller:
// minibatches differ in size every step, and an exact-size cache would never hit.
constexpr std::size_t kHostCacheSlack = 4;

std::size_t host_block_bytes(std::size_t bytes) {
  const std::size_t g = bytes >= kHostCacheMinBytes ? kHostCacheGranule : kHostAlignment;
  return (bytes + g - 1) / g * g;
}

bool host_cache_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("EDGEWISE_HOST_CACHE");
    return !(v && std::string_view(v) == "0");
  }();
  return on;
}

// Allocation statistics per (device type, index), and the host block cache.
// Allocations are coarse (whole buffers), so one mutex-protected map is cheap
// enough and keeps free() sizeless.
struct Tracker {
  std::mutex mutex;
  struct Sizes {
    std::size_t bytes;  // requested
    std::size_t block;  // held (host: the cached block's size, at least the rounded request)
  };
  std::unordered_map<const void*, Sizes> sizes;
  std::map<std::pair<int, int>, MemoryStats> stats;
  std::multimap<std::size_t, void*> host_cache;  // block size -> free block
  std::size_t host_cached = 0;
  std::size_t host_live_blocks = 0;  // live host allocations in rounded block sizes
  std::size_t host_peak_ever = 0;    // its peak: bounds the cache (in the same units as the blocks kept)

  static std::pair<int, int> key(Device d) { return {static_cast<int>(d.type), d.index}; }
  void on_allocate(const void* ptr, std::size_t bytes, std::size_t block, Device d) {
    std::lock_guard<std::mutex> lock(mutex);
    sizes[ptr] = {bytes, block};
    MemoryStats& s = stats[key(d)];
    s.current_bytes += bytes;
    s.peak_bytes = std::max(s.peak_bytes, s.current_bytes);
    if (d.is_cpu()) {
      // Blocks, not requested bytes: a block is rounded up (kHostCacheGranule), and
      // keep_host compares blocks with this peak, so a buffer of a size that is not a
      // multiple of the granule, the only one ever live, is still kept for reuse.
      host_live_blocks += block;
      host_peak_ever = std::max(host_peak_ever, host_live_blocks);
    }
  }
  // Returns the sizes of the pointer's allocation ({0, 0} when it was not ours).
  Sizes on_free(const void* ptr, Device d) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = sizes.find(ptr);
    if (it == sizes.end()) return {0, 0};
    const Sizes held = it->second;
    stats[key(d)].current_bytes -= held.bytes;
    if (d.is_cpu()) host_live_blocks -= held.block;
    sizes.erase(it);
    return held;
  }
  // The smallest cached block of at least `block` bytes and at most a slack fraction
  // more, and its size; {nullptr, 0} when there is none.
  std::pair<void*, std::size_t> take_host(std::size_t block) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = host_cache.lower_bound(block);
    if (it == host_cache.end() || it->first > block + block / kHostCacheSlack) return {nullptr, 0};
    const std::pair<void*, std::size_t> taken{it->second, it->first};
    host_cache.erase(it);
    host_cached -= taken.second;
    stats[key(Device::cpu())].cached_bytes = host_cached;
    return taken;
  }
  // Keeps a freed block while the cache stays within the peak of live blocks. Room is
  // made by dropping the smallest cached blocks first: a large block is the costly one
  // to fault in again, and a small one that is dropped rarely is (malloc serves it).
  bool keep_host(void* p, std::size_t block) {
    std::vector<void*> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (block > host_peak_ever) return false;
      while (host_cached + block > host_peak_ever && !host_cache.empty()) {
        auto smallest = host_cache.begin();
        dropped.push_back(smallest->second);
        host_cached -= smallest->first;
        host_cache.erase(smallest);
      }
      host_cache.emplace(block, p);
      host_cached += block;
      stats[key(Device::cpu())].cached_bytes = host_cached;
    }
    for (void* q : dropped) std::free(q);
    return true;
  }
  void empty_host() {
    std::multimap<std::size_t, void*> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex);
      blocks.swap(host_cache);
      host_cached = 0;
      stats[key(Device::cpu())].cached_bytes = 0;
    }
    for (auto& [size, p] : blocks) std::free(p);
  }
};

Tracker& tracker() {
  static Tracker* t = new Tracker();  // never destroyed: buffers may be freed during exit
  return *t;
}

// A block of at least `bytes`; `held` receives its size (freeing passes it back).
void* host_allocate(std::size_t bytes, std::size_t& held) {
  const std::size_t block = host_block_bytes(bytes);
  held = block;
  const bool cacheable = block >= kHostCacheMinBytes && host_cache_enabled();
  if (cacheable) {
    if (auto [p, size] = tracker().take_host(block); p != nullptr) {
      held = size;
      return p;
    }
  }
  void* p = std::aligned_alloc(kHostAlignment, block);
  if (!p && cacheable) {  // the cache may hold what we need, in other sizes
    tracker().empty_host();
    p = std::aligned_alloc(kHostAlignment, block);
  }
  if (!p) throw std::bad_alloc();
  return p;
}

void host_free(void* p, std::size_t block) {
  if (block >= kHostCacheMinBytes && host_cache_enabled() && tracker().keep_host(p, block)) return;
  std::free(p);
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

void empty_host_cache() { tracker().empty_host(); }

void* device_allocate(std::size_t bytes, Device device) {
  if (bytes == 0) return nullptr;
  if (device.is_cuda()) require_available(device, "device_allocate");  // a clear error, not the driver's
  std::size_t held = bytes;
  void* ptr = device.is_cuda() ? detail::cuda_malloc(bytes, device.index) : host_allocate(bytes, held);
  tracker().on_allocate(ptr, bytes, held, device);
  return ptr;
}

void device_free(void* ptr, Device device) noexcept {
  if (!ptr) return;
  const std::size_t block = tracker().on_free(ptr, device).block;
  if (device.is_cuda()) {
    detail::cuda_free(ptr, device.index);
  } else {
    host_free(ptr, block);
  }
}

void* pinned_host_allocate(std::size_t bytes) noexcept {
  if (bytes == 0 || detail::cuda_device_count(nullptr) == 0) return nullptr;
  return detail::cuda_host_alloc(bytes);
}

void pinned_host_free(void* ptr) noexcept {
  if (ptr) detail::cuda_host_free(ptr);
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
