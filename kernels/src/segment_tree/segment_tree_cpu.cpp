// SegmentTree CPU driver (OpenMP).
//
// update: leaves are written in batch order, so a later duplicate simply overwrites
// an earlier one (last write wins). Ancestors are then recomputed level by level
// from the sorted leaf positions (segment_tree_core.hpp: one owner per ancestor per
// level, so a level's recomputations are independent and may run in parallel), or,
// for batches big enough that this costs more, by rebuilding every level whole.
// sample: one independent descent per draw, parallel over draws.
#include <algorithm>
#include <cstring>

#include "segment_tree/segment_tree_backends.hpp"
#include "segment_tree/segment_tree_core.hpp"

namespace edgewise::segment_tree_detail {

namespace {

// Below this many nodes per level a parallel region costs more than it saves.
constexpr int64_t kParallelNodes = 4096;
constexpr int64_t kParallelDraws = 512;

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
  auto* sorted = static_cast<int64_t*>(ctx.scratch(static_cast<std::size_t>(count) * sizeof(int64_t)));
  std::memcpy(sorted, indices, static_cast<std::size_t>(count) * sizeof(int64_t));
  std::sort(sorted, sorted + count);
  for (int level = 1; level <= levels; ++level) {
#pragma omp parallel for schedule(static) if (count >= kParallelNodes)
    for (int64_t k = 0; k < count; ++k) {
      const int64_t node = owned_ancestor(sorted, k, leaves, level);
      if (node != 0) recompute_node(tree, node);
    }
  }
}

void sample_cpu(const float* tree, int64_t leaves, uint64_t seed, bool stratified, int64_t* out, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelDraws)
  for (int64_t i = 0; i < n; ++i) out[i] = sample_one(tree, leaves, seed, i, n, stratified);
}

}  // namespace edgewise::segment_tree_detail
