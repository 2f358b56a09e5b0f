// scatter_softmax: softmax or log-softmax of each column within the groups of rows that
// an (unsorted) index forms: torch_scatter's scatter_softmax / scatter_log_softmax.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

enum class SoftmaxKind { Softmax, LogSoftmax };

// Sizes: M rows of C features (C >= 1), S groups.
//
// values [M, C]  float, double, Half or BFloat16.
// index  [M]     int32_t or int64_t in [0, S), any order: row r belongs to group index[r].
// out    [M, C]  overwritten; with m = the max of column c over the rows of r's group
//                and z = the sum over those rows of exp(values - m):
//                  Softmax:    out[r, c] = exp(values[r, c] - m) / z
//                  LogSoftmax: out[r, c] = (values[r, c] - m) - log(z + eps)
//                (torch_scatter 2.1.2's formulas: stable for any finite input; a NaN
//                makes its group's column NaN; +inf gives NaN as inf - inf does).
//
// Three passes over the rows, no [M, C] temporary: the group max (scatter_reduce), the
// exponentials written to out while their sums are folded per group (scatter_reduce on
// out), then the normalisation in place. float exp is exp_nonpositive on the CPU
// (within 1 ulp; terms below FLT_MIN count as 0); Half / BFloat16 compute in float and
// round each exponential and each output once (the group sums round once to T).
// Float results are reproducible for a fixed thread count, as scatter_reduce's sums.
//
// out must not overlap values or index; all views on ctx.device(). With ctx.validate
// every index is checked first and a bad argument throws std::invalid_argument naming
// it ("scatter_softmax: index[3] (9) must lie in [0, 5)"), out untouched.
template <class T, class I>
void scatter_softmax(MatrixView<const T> values, VectorView<const I> index, int64_t S, SoftmaxKind kind, double eps,
                     MatrixView<T> out, Context& ctx);

// The same on values given transposed, values_t [C, M] -> out_t [C, M] (softmax along
// the last dimension of a row-major tensor, torch_scatter's dim = -1), without a
// transposed copy: the group reductions are scatter_reduce_transposed's.
template <class T, class I>
void scatter_softmax_transposed(MatrixView<const T> values_t, VectorView<const I> index, int64_t S, SoftmaxKind kind,
                                double eps, MatrixView<T> out_t, Context& ctx);

// scatter_logsumexp: out [S, C] (with `transposed`, values [C, M] and out [C, S]) =
// log(sum over the group's rows of exp(values - m) + eps) + m per group and column,
// torch_scatter 2.1.2's formula: an exponential that is NaN (x - m = -inf - -inf, an
// all -inf group) counts as 0, and a group whose sum is 0 (empty or all -inf) gives 0.
// A NaN value makes its group's column NaN (torch_scatter counts NaNs as absent; a
// caller that needs that recomputes those columns). The same passes as scatter_softmax
// with the exponentials in a temporary, then one per-group pass; same checks and errors.
template <class T, class I>
void scatter_logsumexp(MatrixView<const T> values, VectorView<const I> index, int64_t S, double eps,
                       MatrixView<T> out, bool transposed, Context& ctx);

#define EW_SCATTER_SOFTMAX_EXTERN_INDEX(T, I)                                                                   \
  extern template void scatter_softmax<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, SoftmaxKind, \
                                             double, MatrixView<T>, Context&);                 \
  extern template void scatter_softmax_transposed<T, I>(MatrixView<const T>, VectorView<const I>, int64_t,    \
                                                        SoftmaxKind, double, MatrixView<T>, Context&);   \
  extern template void scatter_logsumexp<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, double,     \
                                               MatrixView<T>, bool, Context&);
#define EW_SCATTER_SOFTMAX_EXTERN(T) \
  EW_SCATTER_SOFTMAX_EXTERN_INDEX(T, int32_t) EW_SCATTER_SOFTMAX_EXTERN_INDEX(T, int64_t)
EW_SCATTER_SOFTMAX_EXTERN(float)
EW_SCATTER_SOFTMAX_EXTERN(double)
EW_SCATTER_SOFTMAX_EXTERN(Half)
EW_SCATTER_SOFTMAX_EXTERN(BFloat16)
#undef EW_SCATTER_SOFTMAX_EXTERN
#undef EW_SCATTER_SOFTMAX_EXTERN_INDEX

}  // namespace edgewise
