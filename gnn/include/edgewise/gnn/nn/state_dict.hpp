// StateDict: named tensors in a fixed order — a module's parameters by dotted name
// ("convs.0.lin.weight") or an optimizer's per-parameter state ("3.exp_avg").
// Values are host copies, independent of the module they came from.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn {

class StateDict {
 public:
  using Entry = std::pair<std::string, Tensor>;

  // Appends `key` (a duplicate key throws std::invalid_argument naming it).
  void insert(std::string key, Tensor value);
  // The tensor under `key`, or nullptr.
  const Tensor* find(std::string_view key) const;
  // The tensor under `key`; throws std::invalid_argument naming the key when absent.
  const Tensor& at(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  std::vector<std::string> keys() const;
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  auto begin() const noexcept { return entries_.begin(); }
  auto end() const noexcept { return entries_.end(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace edgewise::gnn
