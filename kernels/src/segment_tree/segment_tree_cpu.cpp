// SegmentTree CPU driver (OpenMP).
//
// update: leaves are written in batch order, so a later duplicate simply overwrites
// an earlier one (last write wins). Ancestors are then recomputed level by level,
// each from children final at the level below: for small batches on one thread
// (a shared ancestor is recomputed once per update that reaches it, harmlessly);
// for large ones in parallel over the sorted leaf positions (segment_tree_core.hpp:
// one owner per ancestor per level, so no two threads write one node); for batches
// big enough that this costs more, by rebuilding every level whole.
// sample: the shared descent, kLanes draws interleaved per thread, parallel over draws.
#include <algorithm>
#include <cstring>

#include "segment_tree/segment_tree_backends.hpp"
#include "segment_tree/segment_tree_core.hpp"

namespace edgewise::segment_tree_detail {

namespace {

// Below these sizes a parallel region costs more than it saves (a draw or a node
// recomputation takes ~0.1 us; forking and joining threads several us, far more on
// a loaded machine).
constexpr int64_t kParallelNodes = 4096;
constexpr int64_t kParallelDraws = 4096;
// Descents interleaved per thread: each step is a dependent load, so one descent at
// a time waits on memory latency; independent ones in lockstep overlap it.
constexpr int64_t kLanes = 8;

void rebuild_all_levels(float* tree, int64_t leaves) {
  for (int64_t first = leaves / 2; first >= 1; first /= 2) {
#pragma omp parallel for schedule(static) if (first >= kParallelNodes)
    for (int64_t node = first; node < 2 * first; ++node) recompute_node(tree, node);
  }
}

}  // namespace

int64_t first_bad_update_cpu(const int64_t* indices, const float* priorities, int64_t count, int64_t capacity) {
  for (int64_t k = 0; k < count; ++k) {
    if (!valid_index(indices[k], capacity) || !valid_priority(priorities[k])) return k;
  }
  return -1;
}

void update_cpu(float* tree, int64_t leaves, int levels, const int64_t* indices, const float* priorities,
                int64_t count, Context& ctx) {
  for (int64_t k = 0; k < count; ++k) tree[leaves + indices[k]] = stored_priority(priorities[k]);
  if (rebuild_is_cheaper(count, leaves, levels)) {
    rebuild_all_levels(tree, leaves);
    return;
  }
  if (count < kParallelNodes) {
    // One thread: an ancestor shared by several updates is simply recomputed once per
    // update, always from final children, which gives the same value; no sort needed.
    for (int level = 1; level <= levels; ++level) {
      for (int64_t k = 0; k < count; ++k) recompute_node(tree, (leaves + indices[k]) >> level);
    }
    return;
  }
  auto* sorted = static_cast<int64_t*>(ctx.scratch(static_cast<std::size_t>(count) * sizeof(int64_t)));
  std::memcpy(sorted, indices, static_cast<std::size_t>(count) * sizeof(int64_t));
  std::sort(sorted, sorted + count);
  for (int level = 1; level <= levels; ++level) {
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < count; ++k) {
      const int64_t node = owned_ancestor(sorted, k, leaves, level);
      if (node != 0) recompute_node(tree, node);
    }
  }
}

void sample_cpu(const float* tree, int64_t leaves, uint64_t seed, bool stratified, int64_t* out, int64_t n) {
  const float total = tree[1];
  if (!samplable_total(total)) {  // only reachable unvalidated: the contract's -1
    std::fill(out, out + n, int64_t{-1});
    return;
  }
  const int64_t groups = (n + kLanes - 1) / kLanes;
#pragma omp parallel for schedule(static) if (n >= kParallelDraws)
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = g * kLanes;
    const int64_t lanes = std::min<int64_t>(kLanes, n - first);
    int64_t node[kLanes];
    double u[kLanes];
    for (int64_t l = 0; l < kLanes; ++l) {
      node[l] = 1;
      u[l] = l < lanes ? draw_target(seed, first + l, n, stratified, total) : 0.0;  // idle lanes descend too
    }
    // Every leaf is at the same depth: the lanes step in lockstep, their loads independent.
    for (int64_t level = 1; level < leaves; level *= 2) {
      for (int64_t l = 0; l < kLanes; ++l) descend_step(tree, node[l], u[l]);
    }
    for (int64_t l = 0; l < lanes; ++l) out[first + l] = node[l] - leaves;
  }
}

}  // namespace edgewise::segment_tree_detail
