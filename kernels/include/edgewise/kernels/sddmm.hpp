// sddmm: per-edge values from the two endpoints of every edge of a CSR graph (dot and
// additive forms), and edge_gather_sum, the edge -> node sum that is their backward and
// the weighted multi-head aggregation of attention layers.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: S destination rows, N source rows, E edges, H heads (H >= 1), D features per
// head (D >= 1). A [rows, H*D] matrix holds head h of row r at columns [h*D, (h+1)*D).
//
// The graph is a CSR by destination, as in spmm:
// offsets [S + 1]  int64; offsets[0] == 0, offsets[S] == E, nondecreasing. Edge e
//                  (a CSR position) points into destination v = the row whose range
//                  [offsets[v], offsets[v+1]) holds e; empty rows are allowed.
// indices [E]      int32 or int64: src_e in [0, N).
//
// Every output is overwritten (never accumulated); with E == 0 an [0, H] output is
// valid and nothing is written. Each output element is computed by one thread in a
// fixed order, so results are bitwise reproducible across runs and thread counts on the
// same device (CPU and CUDA may differ in the last bits of a dot product).
//
// All views must live on ctx.device(). With ctx.validate (the default) shapes, devices,
// offsets and every index / edge id range are checked before anything is written; a bad
// argument throws std::invalid_argument naming it and leaves every output untouched.

// Dot form:  out[e, h] = sum_d x[src_e, h*D + d] * y[dst_e, h*D + d]
//   x [N, H*D], y [S, H*D], out [E, H] (H = out.cols(), D = x.cols() / H).
//   Summed in d order for D < 16; from D = 16 on, as eight running sums (d mod 8) over
//   the whole multiples of 8, combined as a fixed tree, then the rest in order (so the
//   CPU vectorises it; sddmm_core.hpp's dot_edge).
template <class T, class I>
void sddmm_dot(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> x,
               MatrixView<const T> y, MatrixView<T> out, Context& ctx);

// Additive form (GAT's attention logits): out[e, h] = a[src_e, h] + b[dst_e, h]
//   a [N, H], b [S, H], out [E, H].
template <class T, class I>
void sddmm_add(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> a,
               MatrixView<const T> b, MatrixView<T> out, Context& ctx);

// Edge -> node weighted sum over a CSR (forward or transposed):
//   out[v, h*D + d] = sum over k in [offsets[v], offsets[v+1]) of  w[id_k, h] * x[idx_k, h*D + d]
// with id_k = edge_ids[k] (or k when edge_ids is absent) and idx_k = indices[k].
//   offsets  [R + 1] as above (R = out.rows(); offsets[R] == K, the edge count)
//   indices  [K]  rows of x, in [0, x.rows()); may be absent only when x is absent
//   edge_ids [K]  optional int64 indirection into w's rows, in [0, w.rows())
//   w        [W, H] per-edge, per-head weights
//   x        [M, H*D], or absent (a default-constructed view): x = 1 and D = 1, so
//            out [R, H] holds sums of w
//   out      [R, H*D] overwritten; a row without edges writes 0.
// Uses:
//   attention aggregation   forward CSR, w = alpha [E, H], x = values [N, H*D]
//   sddmm_dot backward      dL/dy: forward CSR, w = g, x = x;  dL/dx: transposed CSR
//                           (indices = destinations, edge_ids = forward positions), x = y
//   sddmm_add backward      dL/db: forward CSR, w = g, x absent; dL/da: transposed CSR
//                           with edge_ids, x absent
//   aggregation backward    dL/dvalues: transposed CSR with edge_ids, w = alpha,
//                           x = dL/dout; dL/dalpha = sddmm_dot(values, dL/dout)
template <class T, class I>
void edge_gather_sum(VectorView<const int64_t> offsets, VectorView<const I> indices,
                     VectorView<const int64_t> edge_ids, MatrixView<const T> w, MatrixView<const T> x,
                     MatrixView<T> out, Context& ctx);

#define EW_SDDMM_DECLARE(T, I)                                                                                \
  extern template void sddmm_dot<T, I>(VectorView<const int64_t>, VectorView<const I>, MatrixView<const T>,   \
                                       MatrixView<const T>, MatrixView<T>, Context&);                         \
  extern template void sddmm_add<T, I>(VectorView<const int64_t>, VectorView<const I>, MatrixView<const T>,   \
                                       MatrixView<const T>, MatrixView<T>, Context&);                         \
  extern template void edge_gather_sum<T, I>(VectorView<const int64_t>, VectorView<const I>,                 \
                                             VectorView<const int64_t>, MatrixView<const T>,                 \
                                             MatrixView<const T>, MatrixView<T>, Context&);
EW_SDDMM_DECLARE(float, int32_t)
EW_SDDMM_DECLARE(float, int64_t)
EW_SDDMM_DECLARE(double, int32_t)
EW_SDDMM_DECLARE(double, int64_t)
#undef EW_SDDMM_DECLARE

}  // namespace edgewise
