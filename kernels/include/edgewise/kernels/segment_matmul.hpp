// segment_matmul and grouped_matmul: many independent dense products in one call — the
// typed linear layers of heterogeneous graphs (one weight per node or edge type) — and
// their gradients.
#pragma once

#include <cstdint>
#include <span>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: N rows, T types (segments), K input and M output features.
//
// ptr [T + 1] int64, on the host whatever the device (pyg-lib's advice too: the
// segment sizes decide the work split before anything runs): ptr[0] == 0,
// nondecreasing, ptr[T] == N. Rows [ptr[t], ptr[t+1]) have type t; a type without
// rows is allowed. A weight stack is a [T * K, M] matrix: block t, rows
// [t*K, (t+1)*K), is type t's [K, M] weight (torch's [T, K, M] tensor, flattened).
//
// Every output is overwritten, never accumulated into. Blocks of work are fixed by the
// shapes alone, and each output element is summed in one fixed order, so results are
// bitwise reproducible across runs and thread counts on one device.
//
// Element types: float, double and BFloat16. BFloat16 products accumulate in float and
// round each output element once (as torch.matmul does in bfloat16); a weight gradient
// summed over several row blocks adds their float partials before rounding. On CPUs
// with AVX512-BF16, products of output width 16..128 (a multiple of 16) run on
// vdpbf16ps, which flushes denormals (below ~1e-38) to zero; elsewhere blocks widen
// to float.
//
// All views live on ctx.device(), except ptr (host). With ctx.validate (the default)
// shapes, devices and ptr are checked before anything is written; a bad argument throws
// std::invalid_argument naming it and leaves every output untouched.

// out[r, :] = x[r, :] @ weight[t]  for r in [ptr[t], ptr[t+1])
//   x [N, K], weight [T*K, M], out [N, M].
// transpose_weight: out[r, :] = x[r, :] @ weight[t]^T with weight [T*M, K] — the input
// gradient (dL/dx = dL/dout @ weight[t]^T) without a transposed copy of the weights.
template <class T>
void segment_matmul(VectorView<const int64_t> ptr, MatrixView<const T> x, MatrixView<const T> weight,
                    MatrixView<T> out, Context& ctx, bool transpose_weight = false);

// The weight gradient of segment_matmul: grad_weight[t] = x[ptr[t]:ptr[t+1]]^T @
// grad_out[ptr[t]:ptr[t+1]]
//   x [N, K], grad_out [N, M], grad_weight [T*K, M]; a type without rows gets zeros.
// Long segments are reduced in fixed blocks of rows whose partial products are added
// in block order (every thread gets work when T is small).
template <class T>
void segment_matmul_weight_grad(VectorView<const int64_t> ptr, MatrixView<const T> x, MatrixView<const T> grad_out,
                                MatrixView<T> grad_weight, Context& ctx);

// Which operands of grouped_matmul are read transposed.
struct MatmulTranspose {
  bool a = false;
  bool b = false;
};

// out[i] = op(a[i]) @ op(b[i]) for every i, independent products of any shapes:
//   op(a[i]) [m_i, k_i] (a[i] is [k_i, m_i] when transpose.a), op(b[i]) [k_i, n_i],
//   out[i] [m_i, n_i]. The three spans have one length; an empty span does nothing.
// The backward of out = a @ b is grad_a = grad @ b^T (transpose.b) and
// grad_b = a^T @ grad (transpose.a).
// Outputs must not overlap each other or any input.
template <class T>
void grouped_matmul(std::span<const MatrixView<const T>> a, std::span<const MatrixView<const T>> b,
                    std::span<const MatrixView<T>> out, Context& ctx, MatmulTranspose transpose = {});

#define EW_SEGMENT_MATMUL_DECLARE(T)                                                                            \
  extern template void segment_matmul<T>(VectorView<const int64_t>, MatrixView<const T>, MatrixView<const T>, \
                                         MatrixView<T>, Context&, bool);                                      \
  extern template void segment_matmul_weight_grad<T>(VectorView<const int64_t>, MatrixView<const T>,          \
                                                     MatrixView<const T>, MatrixView<T>, Context&);           \
  extern template void grouped_matmul<T>(std::span<const MatrixView<const T>>,                                \
                                         std::span<const MatrixView<const T>>, std::span<const MatrixView<T>>, \
                                         Context&, MatmulTranspose);
EW_SEGMENT_MATMUL_DECLARE(float)
EW_SEGMENT_MATMUL_DECLARE(double)
EW_SEGMENT_MATMUL_DECLARE(BFloat16)
#undef EW_SEGMENT_MATMUL_DECLARE

}  // namespace edgewise
