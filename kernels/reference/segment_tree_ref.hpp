// Sequential oracle for SegmentTree: obviously correct, never optimised. It keeps
// the priorities in a plain array, builds the whole sum tree from scratch on demand,
// and draws by a recursive descent written from the contract, not from the drivers.
#pragma once

#include <cfloat>
#include <cstdint>
#include <vector>

#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::reference {

class SegmentTreeRef {
 public:
  explicit SegmentTreeRef(int64_t capacity) : capacity_(capacity), leaves_(1) {
    while (leaves_ < capacity) leaves_ *= 2;
    priorities_.assign(static_cast<size_t>(capacity), 0.0f);
  }

  int64_t leaf_count() const { return leaves_; }
  const std::vector<float>& priorities() const { return priorities_; }

  // Applies the batch one element after another: a later duplicate overwrites.
  void update(const std::vector<int64_t>& indices, const std::vector<float>& priorities) {
    for (size_t k = 0; k < indices.size(); ++k) {
      priorities_[static_cast<size_t>(indices[k])] = priorities[k] == 0.0f ? 0.0f : priorities[k];
    }
  }

  // The full tree [2 L] built bottom-up: node 0 unused, node p = node 2p + node 2p+1.
  std::vector<float> nodes() const {
    std::vector<float> tree(static_cast<size_t>(2 * leaves_), 0.0f);
    for (int64_t i = 0; i < capacity_; ++i) tree[static_cast<size_t>(leaves_ + i)] = priorities_[i];
    for (int64_t p = leaves_ - 1; p >= 1; --p) tree[p] = tree[2 * p] + tree[2 * p + 1];
    return tree;
  }

  double total_exact() const {
    double sum = 0;
    for (float p : priorities_) sum += p;
    return sum;
  }

  // The contract's draw: target u = r * total, or (i + r) / n * total stratified,
  // r the 53-bit uniform of philox_block(seed, kSampleStream, i); then from the root
  // go left when u < the left sum, else subtract it and go right, never entering a
  // child whose sum is 0.
  std::vector<int64_t> sample(int64_t n, uint64_t seed, bool stratified) const {
    const std::vector<float> tree = nodes();
    std::vector<int64_t> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const PhiloxBlock bits = philox_block(seed, SegmentTree::kSampleStream, static_cast<uint64_t>(i));
      const uint64_t k53 = (static_cast<uint64_t>(bits.v[0] >> 5) << 26) | (bits.v[1] >> 6);
      const double r = static_cast<double>(k53) / 9007199254740992.0;  // 2^53
      const double fraction = stratified ? (static_cast<double>(i) + r) / static_cast<double>(n) : r;
      volatile double u = fraction * static_cast<double>(tree[1]);  // rounded once, never fused
      out[static_cast<size_t>(i)] = descend(tree, 1, u);
    }
    return out;
  }

 private:
  int64_t descend(const std::vector<float>& tree, int64_t node, double u) const {
    if (node >= leaves_) return node - leaves_;
    const float left = tree[2 * node], right = tree[2 * node + 1];
    if (left == 0.0f) return descend(tree, 2 * node + 1, u);
    if (right == 0.0f) return descend(tree, 2 * node, u);
    if (u < left) return descend(tree, 2 * node, u);
    return descend(tree, 2 * node + 1, u - left);
  }

  int64_t capacity_;
  int64_t leaves_;
  std::vector<float> priorities_;
};

}  // namespace edgewise::reference
