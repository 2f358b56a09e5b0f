// edge_softmax: softmax of per-edge scores over each destination's incoming edges, per
// head (attention coefficients), and its backward.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: S destination rows, E edges, H heads (H >= 1).
// offsets [S + 1] int64: a CSR by destination (offsets[0] == 0, offsets[S] == E,
//                 nondecreasing); the edges of row v are [offsets[v], offsets[v+1]).
//
// Forward: scores [E, H] -> out [E, H], overwritten:
//   out[e, h] = exp(s[e, h] - m) / sum over e' in seg(v) of exp(s[e', h] - m),
//   m = max over seg(v) of s[., h].
// Each (row, head) is reduced by one thread (CPU) or one warp (CUDA) in two passes, the
// max, then the sum of exp(s - m) (edge_softmax_core.hpp), then normalised: numerically
// stable for any finite scores (1e4 or -1e30 alike), every segment sums to 1. The CPU's
// float exp is exp_nonpositive (common/exp_nonpositive.hpp: within 1 ulp; terms below
// FLT_MIN, i.e. s - m < -87.3, count as 0). An empty row writes nothing (it has no
// edges). A NaN or +inf score makes its (row, head) NaN, and so does a row whose scores
// are all -inf (0 / 0), as torch.softmax does. out must not overlap scores.
//
// Backward: out = the forward's output y, grad_out = dL/dy, grad_scores [E, H]
// overwritten:  grad_s[e, h] = y[e, h] * (g[e, h] - sum over e' in seg(v) of g[e', h] y[e', h]).
// grad_scores may alias grad_out (the row sum is taken before any write of its row).
//
// All views on ctx.device(); with ctx.validate shapes, devices and offsets are checked
// before the first write and a bad argument throws std::invalid_argument naming it,
// leaving the outputs untouched. Results are bitwise reproducible on one device.
template <class T>
void edge_softmax(VectorView<const int64_t> offsets, MatrixView<const T> scores, MatrixView<T> out, Context& ctx);

template <class T>
void edge_softmax_backward(VectorView<const int64_t> offsets, MatrixView<const T> out, MatrixView<const T> grad_out,
                           MatrixView<T> grad_scores, Context& ctx);

#define EW_EDGE_SOFTMAX_DECLARE(T)                                                                    \
  extern template void edge_softmax<T>(VectorView<const int64_t>, MatrixView<const T>, MatrixView<T>, \
                                       Context&);                                                    \
  extern template void edge_softmax_backward<T>(VectorView<const int64_t>, MatrixView<const T>,       \
                                                MatrixView<const T>, MatrixView<T>, Context&);
EW_EDGE_SOFTMAX_DECLARE(float)
EW_EDGE_SOFTMAX_DECLARE(double)
#undef EW_EDGE_SOFTMAX_DECLARE

}  // namespace edgewise
