// StateDict: an insertion-ordered list of named tensors (small; lookups are linear).
#include "edgewise/gnn/nn/state_dict.hpp"

#include <algorithm>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

void StateDict::insert(std::string key, Tensor value) {
  EW_REQUIRE(!contains(key), "state dict: duplicate key '", key, "'");
  entries_.emplace_back(std::move(key), std::move(value));
}

const Tensor* StateDict::find(std::string_view key) const {
  auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.first == key; });
  return it == entries_.end() ? nullptr : &it->second;
}

const Tensor& StateDict::at(std::string_view key) const {
  const Tensor* t = find(key);
  EW_REQUIRE(t != nullptr, "state dict: missing key '", key, "'");
  return *t;
}

std::vector<std::string> StateDict::keys() const {
  std::vector<std::string> ks;
  ks.reserve(entries_.size());
  for (const Entry& e : entries_) ks.push_back(e.first);
  return ks;
}

}  // namespace edgewise::gnn
