// SegmentTree logic shared by the CPU and CUDA drivers (EW_HD): input checks, the
// level-synchronous parent recomputation, and the Philox-driven root-to-leaf descent.
#pragma once

#include <cfloat>
#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/common/sum_tree_descent.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::segment_tree_detail {

constexpr uint64_t kSampleStream = SegmentTree::kSampleStream;

EW_HD_INLINE bool valid_index(int64_t index, int64_t capacity) { return index >= 0 && index < capacity; }

// Finite and >= 0 (NaN fails both comparisons).
EW_HD_INLINE bool valid_priority(float p) { return p >= 0.0f && p <= FLT_MAX; }

// -0 is stored as +0, so a stored zero is always the same bits.
EW_HD_INLINE float stored_priority(float p) { return p == 0.0f ? 0.0f : p; }

// A total sampling can descend from.
EW_HD_INLINE bool samplable_total(float total) { return total > 0.0f && total <= FLT_MAX; }

EW_HD_INLINE void recompute_node(float* tree, int64_t node) { tree[node] = tree[2 * node] + tree[2 * node + 1]; }

// Updating B leaves costs about B * levels node recomputations level by level;
// rebuilding every internal node costs L. Either gives the same bits.
EW_HD_INLINE bool rebuild_is_cheaper(int64_t batch, int64_t leaves, int levels) {
  return batch * static_cast<int64_t>(levels) >= leaves;
}

// Level-synchronous propagation over the sorted leaf positions `sorted[0..count)`
// (duplicates allowed): at `level` (1 = the leaves' parents), entry k owns the
// ancestor of its leaf unless entry k-1 has the same one (equal ancestors are
// adjacent because the list is sorted). Returns the owned node, or 0. Each ancestor
// thus has exactly one writer per level, and it reads children finished at the
// level below: no races however many updates share ancestors.
EW_HD_INLINE int64_t owned_ancestor(const int64_t* sorted, int64_t k, int64_t leaves, int level) {
  const int64_t node = (leaves + sorted[k]) >> level;
  if (k > 0 && ((leaves + sorted[k - 1]) >> level) == node) return 0;
  return node;
}

// In a stably sorted batch, entry k is the last write to its leaf.
EW_HD_INLINE bool last_of_run(const int64_t* sorted, int64_t k, int64_t count) {
  return k + 1 == count || sorted[k + 1] != sorted[k];
}

// a * b rounded once and never fused with a later add or subtract (nvcc and GCC
// both contract a*b - c into an FMA by default), so the descent that follows takes
// the same branches on every device.
EW_HD_INLINE double product_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  double p = a * b;
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(p));  // an opaque register copy: the compiler cannot fuse across it
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(p));
#else
  volatile double opaque = p;
  p = opaque;
#endif
  return p;
#endif
}

// Where draw i lands in [0, total]: a 53-bit Philox uniform r for (seed, i), then
// r * total, or (i + r) / n * total when stratified.
EW_HD_INLINE double draw_target(uint64_t seed, int64_t i, int64_t n, bool stratified, float total) {
  const PhiloxBlock bits = philox_block(seed, kSampleStream, static_cast<uint64_t>(i));
  const double r = uniform_double(bits.v[0], bits.v[1]);
  const double fraction = stratified ? (static_cast<double>(i) + r) / static_cast<double>(n) : r;
  return product_rn(fraction, static_cast<double>(total));
}

// Draw i of n; -1 when the total cannot be sampled (only reachable unvalidated).
EW_HD_INLINE int64_t sample_one(const float* tree, int64_t leaves, uint64_t seed, int64_t i, int64_t n,
                                bool stratified) {
  const float total = tree[1];
  if (!samplable_total(total)) return -1;
  return descend(tree, leaves, draw_target(seed, i, n, stratified, total));
}

}  // namespace edgewise::segment_tree_detail
