// IdSpan: a borrowed array of ids stored in 32 or 64 bits. A graph's CSC keeps its
// source and edge ids in 32 bits where every id fits (CscGraph): half the memory of
// the largest arrays a sampler holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace edgewise::gnn {

class IdSpan {
 public:
  IdSpan() = default;
  IdSpan(std::span<const int64_t> ids) : data_(ids.data()), size_(ids.size()), narrow_(false) {}
  IdSpan(std::span<const int32_t> ids) : data_(ids.data()), size_(ids.size()), narrow_(true) {}
  IdSpan(const std::vector<int64_t>& ids) : IdSpan(std::span<const int64_t>(ids)) {}
  IdSpan(const std::vector<int32_t>& ids) : IdSpan(std::span<const int32_t>(ids)) {}

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  bool narrow() const noexcept { return narrow_; }  // 32-bit ids

  int64_t operator[](size_t k) const noexcept {
    return narrow_ ? static_cast<const int32_t*>(data_)[k] : static_cast<const int64_t*>(data_)[k];
  }
  // f(pointer) with the typed array (const int32_t* or const int64_t*): a hot loop
  // written once runs without a width test per element.
  template <class F>
  decltype(auto) visit(F&& f) const {
    if (narrow_) return f(static_cast<const int32_t*>(data_));
    return f(static_cast<const int64_t*>(data_));
  }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  bool narrow_ = false;
};

}  // namespace edgewise::gnn
