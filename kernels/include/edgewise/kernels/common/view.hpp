// Non-owning typed views (pointer, shape, device). Row-major and contiguous.
#pragma once

#include <cstdint>
#include <type_traits>

#include "edgewise/kernels/common/device.hpp"

namespace edgewise {

// A vector of `size` elements at `data` on `device`.
template <class T>
struct VectorView {
  T* data = nullptr;
  int64_t size = 0;
  Device device{};

  constexpr VectorView() = default;
  constexpr VectorView(T* data_, int64_t size_, Device device_ = Device::cpu())
      : data(data_), size(size_), device(device_) {}
  // A view of mutable elements converts to a view of const elements.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  constexpr VectorView(VectorView<U> other) : data(other.data), size(other.size), device(other.device) {}

  constexpr bool empty() const noexcept { return size == 0; }
  // An absent optional argument is a view with a null pointer.
  constexpr bool present() const noexcept { return data != nullptr; }
  // Host-side element access (CPU views only).
  constexpr T& operator[](int64_t i) const noexcept { return data[i]; }
  constexpr T* begin() const noexcept { return data; }
  constexpr T* end() const noexcept { return data + size; }
};

// A dense row-major matrix of rows x cols elements (row stride == cols).
template <class T>
struct MatrixView {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  Device device{};

  constexpr MatrixView() = default;
  constexpr MatrixView(T* data_, int64_t rows_, int64_t cols_, Device device_ = Device::cpu())
      : data(data_), rows(rows_), cols(cols_), device(device_) {}
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  constexpr MatrixView(MatrixView<U> other)
      : data(other.data), rows(other.rows), cols(other.cols), device(other.device) {}

  constexpr int64_t size() const noexcept { return rows * cols; }
  constexpr bool present() const noexcept { return data != nullptr; }
  constexpr T* row(int64_t r) const noexcept { return data + r * cols; }
  constexpr T& operator()(int64_t r, int64_t c) const noexcept { return data[r * cols + c]; }
  constexpr VectorView<T> flat() const noexcept { return {data, rows * cols, device}; }
};

template <class T>
constexpr VectorView<const T> as_const(VectorView<T> v) noexcept { return v; }
template <class T>
constexpr MatrixView<const T> as_const(MatrixView<T> m) noexcept { return m; }

}  // namespace edgewise
