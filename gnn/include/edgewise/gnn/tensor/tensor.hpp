// Tensor: a dense row-major [rows, cols] matrix on a Device, with shared storage.
// Copies of a Tensor share storage (like PyTorch); clone() makes a deep copy and
// to(device) an explicit host<->device copy. Features are float32 (Tensor); index
// data uses IndexTensor (int64) and IntTensor (int32). Copies and fills are queued
// on the engine's stream for the device (stream.hpp); copies return when done.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise::gnn {

template <class T>
class BasicTensor {
 public:
  BasicTensor() = default;
  // Uninitialised storage of rows x cols on `device`.
  BasicTensor(int64_t rows, int64_t cols, Device device = Device::cpu())
      : storage_(std::make_shared<Buffer<T>>(checked_numel(rows, cols), device)),
        data_(storage_->data()), rows_(rows), cols_(cols), device_(device) {}

  static BasicTensor zeros(int64_t rows, int64_t cols, Device device = Device::cpu()) {
    BasicTensor t(rows, cols, device);
    fill_bytes(t.data_, device, 0, t.bytes(), engine_stream(device));
    return t;
  }
  static BasicTensor full(int64_t rows, int64_t cols, T value, Device device = Device::cpu()) {
    std::vector<T> host(static_cast<size_t>(checked_numel(rows, cols)), value);
    return from_host(host, rows, cols, device);
  }
  // A copy of host data laid out row-major.
  static BasicTensor from_host(std::span<const T> host, int64_t rows, int64_t cols, Device device = Device::cpu()) {
    EW_REQUIRE(static_cast<int64_t>(host.size()) == checked_numel(rows, cols), "Tensor::from_host: ", host.size(),
               " values for a [", rows, ", ", cols, "] tensor");
    BasicTensor t(rows, cols, device);
    copy_bytes(t.data_, device, host.data(), Device::cpu(), host.size_bytes(), engine_stream(device));
    return t;
  }
  static BasicTensor from_host(const std::vector<T>& host, int64_t rows, int64_t cols, Device device = Device::cpu()) {
    return from_host(std::span<const T>(host.data(), host.size()), rows, cols, device);
  }
  // A column vector [n, 1].
  static BasicTensor vector(const std::vector<T>& host, Device device = Device::cpu()) {
    return from_host(host, static_cast<int64_t>(host.size()), 1, device);
  }
  // Wraps memory the caller owns and keeps alive (no copy).
  static BasicTensor borrow(T* data, int64_t rows, int64_t cols, Device device = Device::cpu()) {
    BasicTensor t;
    t.data_ = data;
    t.rows_ = rows;
    t.cols_ = cols;
    t.device_ = device;
    return t;
  }

  // True when this handle is the only one on its storage (safe to take over).
  bool sole_owner() const noexcept { return storage_ != nullptr && storage_.use_count() == 1; }
  bool defined() const noexcept { return data_ != nullptr || (rows_ * cols_ == 0 && storage_ != nullptr); }
  int64_t rows() const noexcept { return rows_; }
  int64_t cols() const noexcept { return cols_; }
  int64_t numel() const noexcept { return rows_ * cols_; }
  Device device() const noexcept { return device_; }
  T* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return static_cast<std::size_t>(numel()) * sizeof(T); }

  MatrixView<T> view() const noexcept { return {data_, rows_, cols_, device_}; }
  MatrixView<const T> cview() const noexcept { return {data_, rows_, cols_, device_}; }
  VectorView<T> flat() const noexcept { return {data_, numel(), device_}; }
  VectorView<const T> cflat() const noexcept { return {data_, numel(), device_}; }

  BasicTensor clone() const { return to(device_); }
  BasicTensor to(Device device) const {
    BasicTensor t(rows_, cols_, device);
    copy_bytes(t.data_, device, data_, device_, bytes(), engine_stream(device, device_));
    return t;
  }
  std::vector<T> to_host_vector() const {
    std::vector<T> host(static_cast<size_t>(numel()));
    copy_bytes(host.data(), Device::cpu(), data_, device_, bytes(), engine_stream(device_));
    return host;
  }
  // Same storage, new shape (numel must match).
  BasicTensor reshape(int64_t rows, int64_t cols) const {
    EW_REQUIRE(rows * cols == numel(), "Tensor::reshape: [", rows, ", ", cols, "] does not hold ", numel(),
               " elements");
    BasicTensor t = *this;
    t.rows_ = rows;
    t.cols_ = cols;
    return t;
  }
  std::string shape_str() const { return detail::concat("[", rows_, ", ", cols_, "]"); }

 private:
  static int64_t checked_numel(int64_t rows, int64_t cols) {
    EW_REQUIRE(rows >= 0 && cols >= 0, "Tensor: shape [", rows, ", ", cols, "] must be non-negative");
    return rows * cols;
  }

  std::shared_ptr<Buffer<T>> storage_;
  T* data_ = nullptr;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  Device device_{};
};

using Tensor = BasicTensor<float>;
using IndexTensor = BasicTensor<int64_t>;
using IntTensor = BasicTensor<int32_t>;

}  // namespace edgewise::gnn
