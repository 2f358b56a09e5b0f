// Context: the device, CUDA stream, scratch memory and validation flag an op runs with.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/device.hpp"

namespace edgewise {

class Context {
 public:
  // `stream` is a cudaStream_t (nullptr: the default stream); ignored on CPU.
  explicit Context(Device device = Device::cpu(), void* stream = nullptr)
      : device_(device), stream_(stream) {}

  Device device() const noexcept { return device_; }
  void* stream() const noexcept { return stream_; }

  // When true (default) ops check their inputs before the first write and throw
  // std::invalid_argument naming the argument; when false the hot path trusts them.
  bool validate = true;

  // When true the caller keeps nothing in the ops' outputs (it just allocated them): an
  // op may then check index contents while it writes instead of in a pass before (bad
  // input throws the same error, naming the first offender, but the outputs are then
  // partly written). Ops without such a path ignore it.
  bool outputs_fresh = false;

  // Scratch memory on this context's device, at least `bytes`, 256-byte aligned.
  // Grows as needed and is reused by the next op: one op owns it at a time, and
  // every pointer from an earlier call is invalid after the next call.
  void* scratch(std::size_t bytes) {
    if (scratch_.bytes() < bytes) {
      scratch_ = Buffer<std::byte>();  // free first: peak memory stays one arena
      scratch_ = Buffer<std::byte>(static_cast<int64_t>(bytes), device_);
    }
    return scratch_.data();
  }

  // Waits for the work this context queued.
  void synchronize() const { edgewise::synchronize(device_, stream_); }

 private:
  Device device_;
  void* stream_ = nullptr;
  Buffer<std::byte> scratch_;
};

// Carves typed, aligned pieces out of one scratch allocation.
class ScratchLayout {
 public:
  template <class T>
  std::size_t add(int64_t count) {
    std::size_t offset = (bytes_ + 255) & ~std::size_t{255};
    bytes_ = offset + static_cast<std::size_t>(count) * sizeof(T);
    return offset;
  }
  std::size_t bytes() const noexcept { return bytes_; }
  template <class T>
  static T* at(void* base, std::size_t offset) noexcept {
    return reinterpret_cast<T*>(static_cast<std::byte*>(base) + offset);
  }

 private:
  std::size_t bytes_ = 0;
};

}  // namespace edgewise

namespace edgewise {
// A per-thread Context for `device` (default stream, validation on), used by the
// overloads that take no Context.
Context& default_context(Device device);
// A per-thread Context with validation off, for callers whose inputs were validated
// once at a boundary (a Graph at construction): the hot path then trusts them.
Context& trusted_context(Device device);
}  // namespace edgewise
