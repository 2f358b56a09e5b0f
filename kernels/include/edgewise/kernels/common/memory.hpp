// Raw allocation and copies on a Device. Buffer<T> (buffer.hpp) is the RAII face.
#pragma once

#include <cstddef>

#include "edgewise/kernels/common/device.hpp"

namespace edgewise {

// Host memory is 64-byte aligned; CUDA memory comes from cudaMalloc on the device.
// Zero bytes gives nullptr. Throws std::bad_alloc (host) or edgewise::CudaError.
// Host blocks of 256 KiB and more are cached when freed and handed out again for
// requests of their rounded size or up to a fifth smaller (the smallest such block
// first): a training loop allocates the same large tensors every epoch, or tensors
// of similar sizes every minibatch, and fresh ones would come from mmap,
// page-faulting and zeroing every page each time (a third of an R-MAT 1M-node GCN
// epoch). The cache holds at most as
// many bytes as the peak of live host memory (so the footprint stays under twice
// the peak), is emptied when an allocation fails, and is off with
// EDGEWISE_HOST_CACHE=0.
void* device_allocate(std::size_t bytes, Device device);
// Tolerates nullptr and a CUDA runtime that is already unloading (at exit).
void device_free(void* ptr, Device device) noexcept;

// Page-locked (pinned) host memory, which a CUDA device reads without a staging copy
// and copies to asynchronously: nullptr when this build has no CUDA, no device is
// present or the runtime refuses (callers then use pageable memory). Zero bytes gives
// nullptr. Not counted by memory_stats, never cached.
void* pinned_host_allocate(std::size_t bytes) noexcept;
void pinned_host_free(void* ptr) noexcept;

// Copies bytes between any two devices. `stream` (a cudaStream_t, or nullptr for
// the default stream) orders the copy; the call returns after the copy is done.
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device,
                std::size_t bytes, void* stream = nullptr);
// memset on a device, ordered on `stream` (asynchronous on CUDA).
void fill_bytes(void* dst, Device device, int byte_value, std::size_t bytes,
                void* stream = nullptr);
// Bytes currently allocated through device_allocate on a device, and the peak
// since the last reset (for reporting memory use, e.g. fused vs message paths).
// Cached (freed, kept for reuse) bytes are not counted as allocated.
struct MemoryStats {
  std::size_t current_bytes = 0;
  std::size_t peak_bytes = 0;
  std::size_t cached_bytes = 0;
};
MemoryStats memory_stats(Device device);
void reset_peak_memory(Device device);
// Returns the cached host blocks to the system.
void empty_host_cache();

// Waits for all work queued on `stream` of `device` (no-op on CPU).
void synchronize(Device device, void* stream = nullptr);

}  // namespace edgewise
