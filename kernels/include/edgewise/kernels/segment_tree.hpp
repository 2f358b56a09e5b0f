// SegmentTree: a sum tree over float32 priorities for importance-weighted sampling.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: N = capacity (the number of priorities a user addresses), L = leaf_count()
// (N rounded up to a power of two), B = batch size of an update, n = draws.
//
// Layout: nodes() is [2 L] floats; node 1 is the root, node p has children 2p and
// 2p+1, leaf i is node L + i, node 0 is unused (0). Leaves N..L-1 are padding: always
// 0, never drawn, never addressable. Every internal node holds exactly the float sum
// tree[2p] + tree[2p+1] of its children, so the tree is a pure function of its
// leaves and is bitwise identical on every device and at any thread count.
//
// The tree owns its storage on one device; every view passed to it and every
// Context must be on that device (views are never copied implicitly). With
// ctx.validate (the default) bad input throws std::invalid_argument naming the
// method, the argument and the first bad position, before anything is written:
// the tree and caller-owned outputs are left exactly as they were.
class SegmentTree {
 public:
  // The Philox stream of sample(): draw i of sample(seed) uses
  // philox_block(seed, kSampleStream, i) (common/philox.hpp).
  static constexpr uint64_t kSampleStream = 0x5345475452454531ull;  // "SEGTREE1"

  // A tree of `capacity` zero priorities on `device`. capacity >= 1.
  explicit SegmentTree(int64_t capacity, Device device = Device::cpu());

  int64_t capacity() const noexcept { return capacity_; }
  int64_t leaf_count() const noexcept { return leaves_; }
  Device device() const noexcept { return tree_.device(); }

  // Sets priorities[k] at leaf indices[k] for every k, then restores every ancestor
  // of a changed leaf (level by level, each parent recomputed once from its two
  // children: no races when updates share ancestors).
  // indices    [B] int64, each in [0, N). A repeated index takes the priority of
  //            its last occurrence in the batch (last write wins).
  // priorities [B] float32, finite and >= 0 (-0 is stored as +0).
  // B == 0 changes nothing.
  void update(VectorView<const int64_t> indices, VectorView<const float> priorities, Context& ctx);
  void update(VectorView<const int64_t> indices, VectorView<const float> priorities);

  // Draws out.size indices (int64, in [0, N)), each with probability
  // priority / total(), independently (stratified == false) or one per stratum
  // (stratified == true: draw i falls in the i-th of n equal-mass slices of the
  // total, so the draws come out nondecreasing). Draw i is a pure function of
  // (tree, seed, i, n, stratified): counter-based Philox keyed by (seed, i), a
  // root-to-leaf descent in double precision; CPU and CUDA give identical draws.
  // A leaf of priority 0 is never drawn, even where float rounding makes the
  // running sum overshoot a subtree (the descent then stays in the nonzero child).
  // Needs total() finite and > 0 when out.size > 0 (with ctx.validate off, a bad
  // total writes -1 to every draw instead of throwing).
  void sample(VectorView<int64_t> out, uint64_t seed, bool stratified, Context& ctx) const;
  void sample(VectorView<int64_t> out, uint64_t seed, bool stratified = false) const;

  // The sum of all priorities (the root), O(1): on CUDA one 4-byte read, ordered
  // on ctx's stream (the overload without a context uses the default stream).
  float total(Context& ctx) const;
  float total() const;

  // Copies the N priorities into out [N] (on the tree's device).
  void priorities(VectorView<float> out, Context& ctx) const;
  void priorities(VectorView<float> out) const;

  // The whole tree [2 L] (see Layout), e.g. to check the sum invariant.
  VectorView<const float> nodes() const noexcept { return tree_.view(); }

 private:
  int64_t capacity_ = 0;
  int64_t leaves_ = 0;
  int levels_ = 0;  // log2(L): the levels above the leaves
  Buffer<float> tree_;
};

}  // namespace edgewise
