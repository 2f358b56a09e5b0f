// Host <-> device copies ordered on the engine's stream (engine_stream), as all engine
// work is. Buffer::from_host, Buffer::to and to_host_vector use the CUDA default
// stream instead, which does not order itself with a non-blocking stream that a
// StreamGuard (e.g. the caller's torch stream) has set.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/buffer.hpp"

namespace edgewise::gnn {

// A buffer on `device` holding a copy of `host`.
template <class T>
Buffer<T> upload(std::span<const T> host, Device device) {
  Buffer<T> out(static_cast<int64_t>(host.size()), device);
  copy_bytes(out.data(), device, host.data(), Device::cpu(), host.size_bytes(), engine_stream(device));
  return out;
}

// A copy of `b` on `device`.
template <class T>
Buffer<T> copy_of(const Buffer<T>& b, Device device) {
  Buffer<T> out(b.size(), device);
  copy_bytes(out.data(), device, b.data(), b.device(), b.bytes(), engine_stream(device, b.device()));
  return out;
}

// n elements at `data` on `device`, on the host.
template <class T>
std::vector<T> host_vector(const T* data, int64_t n, Device device) {
  std::vector<T> out(static_cast<size_t>(n));
  copy_bytes(out.data(), Device::cpu(), data, device, out.size() * sizeof(T), engine_stream(device));
  return out;
}

}  // namespace edgewise::gnn
