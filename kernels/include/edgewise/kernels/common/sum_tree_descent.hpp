// The root-to-leaf descent of a sum tree (SegmentTree's sampling step), written once
// for the CPU and CUDA drivers (EW_HD) and public so that its contract — half-open
// intervals, never a zero child, whatever the rounding — is tested on its own.
// Layout: node 1 the root, node k's children 2k and 2k + 1, leaves at [L, 2L).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::segment_tree_detail {

// One step of the root-to-leaf descent for target u: left when u < the left sum
// (strict), else subtract it and go right. A zero child is never entered: when
// rounding leaves u at or beyond a subtree's mass the descent stays in the nonzero
// sibling, so the leaf reached always has priority > 0 (each node entered is > 0,
// and a positive node has a positive child). Written without branches: the
// direction is a coin flip no predictor can learn, and the CPU driver interleaves
// several descents so that their loads overlap.
EW_HD_INLINE void descend_step(const float* tree, int64_t& node, double& u) {
  const float left = tree[2 * node];
  const float right = tree[2 * node + 1];
  const bool go_right = !(left > 0.0f) || (right > 0.0f && !(u < static_cast<double>(left)));
  const int64_t step = go_right ? 1 : 0;
  // left * 0 or left * 1 is exact, so this equals the branchy `if (go_right) u -= left`
  // bit for bit (fused or not), and compilers keep it a select instead of a branch.
  u -= static_cast<double>(left) * static_cast<double>(step);
  node = 2 * node + step;
}

// The leaf (in [0, L)) reached from the root for target u in [0, tree[1]]
// (tree[1] > 0). Every leaf is `levels` steps below the root.
EW_HD_INLINE int64_t descend(const float* tree, int64_t leaves, double u) {
  int64_t node = 1;
  while (node < leaves) descend_step(tree, node, u);
  return node - leaves;
}

}  // namespace edgewise::segment_tree_detail
