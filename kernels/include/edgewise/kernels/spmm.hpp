// spmm: fused gather-reduce over a CSR graph (out[v] = op over edges e -> v of w_e * x[src_e]),
// and the backward helpers that aggregation layers need.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: S destination rows, N source rows, E edges, C features (C >= 1).
//
// ---------------------------------------------------------------------------------------
// Forward
// ---------------------------------------------------------------------------------------
// offsets [S + 1]  int64; offsets[0] == 0, offsets[S] == E, nondecreasing. The edges of
//                  destination row v are the CSR positions e in [offsets[v], offsets[v+1]).
// indices [E]      int32 or int64: src_e, the source row of edge e, in [0, N).
// weights          optional (a default-constructed view = every weight 1): w_e, of x's type.
//                  [E] in CSR order, or any length W with options.weight_ids (below).
// x       [N, C]   the source features: float or double (T; weights, out and every
//                  gradient below have the same type).
// out     [S, C]   overwritten: out[v, c] = op over e in seg(v) of w_e * x[src_e, c].
//                  Exactly segment_reduce (same Reducer, same rules) applied to the
//                  messages m_e = w_e * x[src_e] — but the [E, C] message matrix is
//                  never materialised. sum/mean accumulate in float in a fixed order
//                  (edge order on CPU), so a result is bitwise identical across runs and
//                  thread counts on the same device (CuSparse algorithm: see below).
//                  mean = (weighted) sum / number of edges. An empty row writes the
//                  op's empty value (as segment_reduce: 0 for sum, mean, min, max).
// arg     [S, C]   optional, min/max only: the EDGE POSITION e (CSR order) of the winning
//                  message, so a backward pass finds both src_e and w_e; ties -> the lower
//                  e; NaN beats every number; an empty row writes -1.
//
// With x a dense [F, H] matrix and (offsets, indices, weights) a CSR [S, F] sparse matrix
// (e.g. sparse node features), op sum is the sparse x dense product.
//
// out and arg must not overlap any input (offsets, indices, weights, weight_ids, x) or
// each other; in the backward helpers grad_x must not overlap their inputs (checked
// with ctx.validate: std::invalid_argument "... overlap in memory").
//
// All views must live on ctx.device(). With ctx.validate (the default) everything is
// checked before anything is written — shapes, devices, offsets, every index (and
// weight id) range; CPU names the first bad position, CUDA reads one device-side error
// word back — and a bad argument throws std::invalid_argument naming it, leaving out/arg
// exactly as they were. With validate off, the hot path trusts its input.

// How the CUDA backend computes spmm. CPU always runs the native kernel.
//  Native    our kernel: a group of lanes per destination row (sub-warp for narrow C,
//            16-byte loads), hub rows split into pieces merged in order; no atomics,
//            bitwise reproducible; every op.
//  CuSparse  cusparseSpMM (CSR, row-major dense), op sum only, int32 or int64 indices.
//            cuSPARSE does not promise bitwise-reproducible results for every algorithm
//            and version, so treat this path as not reproducible.
//  Auto      Native for now. The choice between the two is to be made by measurement on
//            a GPU (edgewise-bench spmm cases); none was available when this was written.
enum class SpmmAlgorithm : int { Auto = 0, Native = 1, CuSparse = 2 };

struct SpmmOptions {
  SpmmAlgorithm algorithm = SpmmAlgorithm::Auto;
  // Optional [E] int64 weight indirection: w_e = weights[weight_ids[e]], ids in
  // [0, weights.size()). Lets a caller keep edge weights in their original order.
  VectorView<const int64_t> weight_ids;
};

template <class T, class I>
void spmm(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
          MatrixView<const T> x, ReduceOp op, MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx,
          const SpmmOptions& options = {});

// The same on a per-thread default context for x's device.
template <class T, class I>
void spmm(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
          MatrixView<const T> x, ReduceOp op, MatrixView<T> out, MatrixView<int64_t> arg = {});

// ---------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------
// The gradients w.r.t. x are gathers over the TRANSPOSED CSR (the same E edges grouped
// by source), which the caller builds once per graph:
//   t_offsets  [N + 1] int64: the transposed edges of source u are t in
//              [t_offsets[u], t_offsets[u+1]); t_offsets[N] == E.
//   t_indices  [E] I: the destination row v (in [0, S)) of transposed edge t.
//   t_edge_ids [E] int64: the forward CSR position e of transposed edge t, in [0, E)
//              (a permutation; used to find w_e and to match arg).
// grad_out [S, C] is dL/d out; grad_x [N, C] is overwritten (rows with no edges get 0).
// Each output element is summed by one thread in transposed-edge order (hubs in fixed
// pieces), so results are bitwise reproducible like the forward. No atomics.

// Whether spmm_backward / spmm_arg_backward / spmm_weight_backward cover `op` (its
// backward rule is sum, mean or arg). Ops whose gradient needs the forward's values
// (mul, var, std) are rejected there with std::invalid_argument: spmm_full_backward
// covers every op.
bool spmm_has_backward(ReduceOp op) noexcept;

// dL/dx, and dL/dw when grad_w is given, for EVERY op, from the forward's inputs
// (offsets, indices, weights, x), output out and arg (min/max under TieRule::First
// only). Each message m_e = w_e x[src_e] of output v gets g_e = grad_out[v] * d out[v]
// / d m_e by the op's rule (edgewise/kernels/reduce_backward.hpp: mul out / m; var
// 2 (m - mean) / deg; std (m - mean) / (deg out), 0 where out was masked; min/max by
// tie_rule: First all to the arg edge, Split 1/k to each of the k messages equal to
// out[v], SplitWithZeroBase 1/(k+1) where out[v] is 0, as torch's scatter_reduce
// ("amax", include_self=False) onto zeros and so PyG's max aggregation), in an
// [E, C] buffer; then
//   grad_x[u] = sum over transposed edges t of u of  w_e g_e     (e = t_edge_ids[t])
//   grad_w[e] = sum_c g_e[c] x[src_e, c]
// The sum over t is the transposed gather of spmm_backward (reproducible, no atomics).
// t_offsets [N + 1] and t_edge_ids [E] (required) describe the transposed CSR.
template <class T, class I>
void spmm_full_backward(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
                        MatrixView<const T> x, ReduceOp op, MatrixView<const T> out, MatrixView<const int64_t> arg,
                        MatrixView<const T> grad_out, VectorView<const int64_t> t_offsets,
                        VectorView<const int64_t> t_edge_ids, MatrixView<T> grad_x, VectorView<T> grad_w,
                        Context& ctx, TieRule tie_rule = TieRule::First);

// dL/dx for op sum or mean:
//   grad_x[u] = sum over t of u of  w_e * grad_out[v_t]            (sum)
//                                   w_e * grad_out[v_t] / deg(v_t)  (mean)
// where e = t_edge_ids[t] and deg(v) = offsets[v+1] - offsets[v] (the forward offsets,
// required for mean, ignored for sum). weights are in FORWARD order ([E], or with
// t_edge_ids absent: in transposed order); t_edge_ids may be absent when weights are.
template <class T, class I>
void spmm_backward(VectorView<const int64_t> t_offsets, VectorView<const I> t_indices,
                   VectorView<const int64_t> t_edge_ids, VectorView<const T> weights,
                   MatrixView<const T> grad_out, ReduceOp op, VectorView<const int64_t> offsets,
                   MatrixView<T> grad_x, Context& ctx);

// dL/dx for op min or max, routed through the forward's arg [S, C]:
//   grad_x[u, c] = sum over t of u with arg[v_t, c] == e of  w_e * grad_out[v_t, c]
// (e = t_edge_ids[t], required). weights optional, [E] in forward order.
template <class T, class I>
void spmm_arg_backward(VectorView<const int64_t> t_offsets, VectorView<const I> t_indices,
                       VectorView<const int64_t> t_edge_ids, VectorView<const T> weights,
                       MatrixView<const T> grad_out, MatrixView<const int64_t> arg, MatrixView<T> grad_x,
                       Context& ctx);

// dL/dw (an SDDMM over the forward CSR), grad_w [E] overwritten in forward order:
//   sum:      grad_w[e] = sum_c grad_out[v, c] * x[src_e, c]              (v: row of e)
//   mean:     the same divided by deg(v)
//   min/max:  sum over c with arg[v, c] == e only (arg required)
// Each grad_w[e] is one thread's (CUDA: one warp's fixed tree) dot product: reproducible.
template <class T, class I>
void spmm_weight_backward(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> x,
                          MatrixView<const T> grad_out, ReduceOp op, MatrixView<const int64_t> arg,
                          VectorView<T> grad_w, Context& ctx);

#define EW_SPMM_DECLARE(T, I)                                                                                \
  extern template void spmm<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const T>,       \
                                  MatrixView<const T>, ReduceOp, MatrixView<T>, MatrixView<int64_t>, Context&, \
                                  const SpmmOptions&);                                                       \
  extern template void spmm<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const T>,       \
                                  MatrixView<const T>, ReduceOp, MatrixView<T>, MatrixView<int64_t>);        \
  extern template void spmm_backward<T, I>(VectorView<const int64_t>, VectorView<const I>,                  \
                                           VectorView<const int64_t>, VectorView<const T>, MatrixView<const T>, \
                                           ReduceOp, VectorView<const int64_t>, MatrixView<T>, Context&);    \
  extern template void spmm_arg_backward<T, I>(VectorView<const int64_t>, VectorView<const I>,              \
                                               VectorView<const int64_t>, VectorView<const T>,              \
                                               MatrixView<const T>, MatrixView<const int64_t>, MatrixView<T>, \
                                               Context&);                                                    \
  extern template void spmm_weight_backward<T, I>(VectorView<const int64_t>, VectorView<const I>,           \
                                                  MatrixView<const T>, MatrixView<const T>, ReduceOp,        \
                                                  MatrixView<const int64_t>, VectorView<T>, Context&);
EW_SPMM_DECLARE(float, int32_t)
EW_SPMM_DECLARE(float, int64_t)
EW_SPMM_DECLARE(double, int32_t)
EW_SPMM_DECLARE(double, int64_t)
#undef EW_SPMM_DECLARE

}  // namespace edgewise
