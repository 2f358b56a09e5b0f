// The backward of segment_reduce and scatter_reduce: the gradient of every reduced
// element for every op, from the forward's inputs and outputs.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// For out = segment_reduce(values, offsets, op) (or scatter_reduce(values, index, op)):
//   grad_values[r, c] = grad_out[s, c] * d out[s, c] / d values[r, c],  s the output of row r,
// by the op's backward rule (common/reducer.hpp):
//   sum 1;  mean 1 / count;  mul out / values (torch_scatter's: inf/NaN where a value is 0);
//   min/max by tie_rule (TieRule, common/reduce_op.hpp):
//     First (default)  1 for the row arg picked (arg required), else 0;
//     Split            1 / k for each of the k rows whose value equals out (NaN ties with
//                      NaN), else 0, read from out alone (arg is not needed and ignored);
//     SplitWithZeroBase as Split, but 1 / (k + 1) where out is 0: torch's
//                      scatter_reduce("amax"/"amin", include_self=False) onto zeros, PyG's rule;
//   var 2 (v - mean) / count;  std (v - mean) / (count * out), 0 where out was masked to 0.
// values [M, C], out / grad_out [S, C] and arg [S, C] (min/max, First only) are the
// forward's; grad_values [M, C] is overwritten. float and double only. The mean of var/std is
// recomputed (per segment with the forward's Welford fold; per scatter output as a
// sum corrected by the mean of its residuals), so it is as accurate as the forward's.
// Bad arguments throw std::invalid_argument naming them; grad_values is then untouched.
template <class T>
void segment_reduce_backward(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                             MatrixView<const T> out, MatrixView<const int64_t> arg, MatrixView<const T> grad_out,
                             MatrixView<T> grad_values, Context& ctx, TieRule tie_rule = TieRule::First);

template <class T, class I>
void scatter_reduce_backward(MatrixView<const T> values, VectorView<const I> index, ReduceOp op,
                             MatrixView<const T> out, MatrixView<const int64_t> arg, MatrixView<const T> grad_out,
                             MatrixView<T> grad_values, Context& ctx, TieRule tie_rule = TieRule::First);

}  // namespace edgewise
