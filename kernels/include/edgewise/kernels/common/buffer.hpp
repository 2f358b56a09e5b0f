// Buffer<T>: an owning, move-only array on a Device, with explicit host<->device copies.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

template <class T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t size, Device device = Device::cpu()) : size_(size), device_(device) {
    EW_REQUIRE(size >= 0, "Buffer: size (", size, ") must be >= 0");
    data_ = static_cast<T*>(device_allocate(static_cast<std::size_t>(size) * sizeof(T), device));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        device_(other.device_) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
      device_ = other.device_;
    }
    return *this;
  }
  ~Buffer() { release(); }

  // A buffer on `device` holding a copy of host elements.
  static Buffer from_host(std::span<const T> host, Device device = Device::cpu()) {
    Buffer out(static_cast<int64_t>(host.size()), device);
    copy_bytes(out.data_, device, host.data(), Device::cpu(), host.size_bytes());
    return out;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  int64_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(size_) * sizeof(T); }
  Device device() const noexcept { return device_; }
  bool empty() const noexcept { return size_ == 0; }

  VectorView<T> view() noexcept { return {data_, size_, device_}; }
  VectorView<const T> view() const noexcept { return {data_, size_, device_}; }
  MatrixView<T> matrix(int64_t rows, int64_t cols) {
    EW_REQUIRE(rows * cols == size_, "Buffer::matrix: ", rows, " x ", cols, " != size (", size_, ")");
    return {data_, rows, cols, device_};
  }
  MatrixView<const T> matrix(int64_t rows, int64_t cols) const {
    EW_REQUIRE(rows * cols == size_, "Buffer::matrix: ", rows, " x ", cols, " != size (", size_, ")");
    return {data_, rows, cols, device_};
  }

  // A copy of this buffer on `device` (same device: a deep copy).
  Buffer to(Device device) const {
    Buffer out(size_, device);
    copy_bytes(out.data_, device, data_, device_, bytes());
    return out;
  }
  std::vector<T> to_host_vector() const {
    std::vector<T> host(static_cast<std::size_t>(size_));
    copy_bytes(host.data(), Device::cpu(), data_, device_, bytes());
    return host;
  }
  // Sets every byte to `byte_value` (e.g. 0xFF to poison an output in tests).
  void fill_bytes(int byte_value) { edgewise::fill_bytes(data_, device_, byte_value, bytes()); synchronize(device_); }

 private:
  void release() noexcept {
    device_free(data_, device_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  int64_t size_ = 0;
  Device device_{};
};

}  // namespace edgewise
