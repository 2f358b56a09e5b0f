// Node -> local id tables of the hop samplers (HopSampler, HeteroHopSampler).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace edgewise::gnn::sampling {

// Node -> local id. Shared subgraphs: a dense table over all nodes (one load per
// lookup); disjoint subgraphs key by (seed index, node) in an open-addressing table.
// Either is emptied by clear(), which touches only what was set.
class LocalIds {
 public:
  LocalIds(std::vector<int32_t>& dense, std::vector<uint64_t>& keys, std::vector<int32_t>& values, int64_t num_nodes,
           bool disjoint)
      : dense_(dense), keys_(keys), values_(values), num_nodes_(num_nodes), disjoint_(disjoint) {
    if (!disjoint_ && static_cast<int64_t>(dense_.size()) < num_nodes_) {
      dense_.assign(static_cast<size_t>(num_nodes_), -1);
    }
    if (disjoint_ && keys_.empty()) grow(1024);
  }

  // The local id of (b, v), inserting `next` when absent; second: whether inserted.
  std::pair<int32_t, bool> insert(int64_t b, int64_t v, int32_t next) {
    if (!disjoint_) {
      int32_t& slot = dense_[static_cast<size_t>(v)];
      if (slot >= 0) return {slot, false};
      slot = next;
      return {next, true};
    }
    if (2 * (size_ + 1) > keys_.size()) grow(2 * keys_.size());
    const uint64_t key = static_cast<uint64_t>(b) * static_cast<uint64_t>(num_nodes_) + static_cast<uint64_t>(v);
    size_t i = slot_of(key);
    while (keys_[i] != kEmpty) {
      if (keys_[i] == key) return {values_[i], false};
      i = (i + 1) & (keys_.size() - 1);
    }
    keys_[i] = key;
    values_[i] = next;
    ++size_;
    return {next, true};
  }

  int32_t find(int64_t v) const { return dense_[static_cast<size_t>(v)]; }  // shared subgraphs only
  void prefetch(int64_t v) const { __builtin_prefetch(dense_.data() + v); }  // shared subgraphs only

  void clear(std::span<const int64_t> nodes) {
    if (!disjoint_) {
      for (int64_t v : nodes) dense_[static_cast<size_t>(v)] = -1;
      return;
    }
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    size_ = 0;
  }

 private:
  static constexpr uint64_t kEmpty = std::numeric_limits<uint64_t>::max();
  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 20) & (keys_.size() - 1);
  }
  void grow(size_t capacity) {
    std::vector<uint64_t> old_keys(capacity, kEmpty);
    std::vector<int32_t> old_values(capacity, -1);
    old_keys.swap(keys_);
    old_values.swap(values_);
    for (size_t j = 0; j < old_keys.size(); ++j) {
      if (old_keys[j] == kEmpty) continue;
      size_t i = slot_of(old_keys[j]);
      while (keys_[i] != kEmpty) i = (i + 1) & (keys_.size() - 1);
      keys_[i] = old_keys[j];
      values_[i] = old_values[j];
    }
  }

  std::vector<int32_t>& dense_;
  std::vector<uint64_t>& keys_;
  std::vector<int32_t>& values_;
  int64_t num_nodes_;
  bool disjoint_;
  size_t size_ = 0;
};

}  // namespace edgewise::gnn::sampling
