// segment_reduce: reduce the rows of each offset-delimited segment.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/element_types.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: M rows of C features (C >= 1), S segments.
//
// values  [M, C]   float, double, int32_t, uint32_t, int64_t, Half or BFloat16
//                  (EW_REDUCE_ELEMENT_TYPES, common/element_types.hpp).
// offsets [S + 1]  int64; offsets[0] == 0, offsets[S] == M, nondecreasing. Segment s
//                  owns rows [offsets[s], offsets[s+1]); equal neighbours = empty segment.
// out     [S, C]   overwritten: out[s, c] = op over rows r of segment s of values[r, c].
//                  sum/mean of float (double) accumulate in float (double) in a fixed order, so a result is
//                  bitwise identical across runs and thread counts on the same device;
//                  Half / BFloat16 accumulate in float (sum, mean, mul, var, std) and
//                  round once, on output; min/max compare their exact float values.
//                  int32 / int64 sums accumulate in int64 (modulo 2^64) and int32 wraps
//                  on output; integer means round toward -inf (floor, as torch_scatter).
//                  An empty segment writes the op's empty value, finalize(identity(), 0)
//                  of its trait (common/reducer.hpp): 0 for sum, mean, min and max.
// arg     [S, C]   optional (pass a default-constructed view to skip), min/max only:
//                  the row of the winning element; ties -> the lower row; NaN beats
//                  every number; an empty segment writes -1.
//
// out and arg must not overlap values, offsets or each other (checked with
// ctx.validate: std::invalid_argument "... overlap in memory").
//
// All views must live on ctx.device(). With ctx.validate (the default) every
// argument is checked before anything is written; a bad one throws
// std::invalid_argument naming it, and out/arg are left exactly as they were.
template <class T>
void segment_reduce(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                    MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx);

// The same on a per-thread default context for the views' device.
template <class T>
void segment_reduce(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                    MatrixView<T> out, MatrixView<int64_t> arg = {});

#define EW_SEGMENT_REDUCE_EXTERN(T)                                                                           \
  extern template void segment_reduce<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                         MatrixView<int64_t>, Context&);                                        \
  extern template void segment_reduce<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                         MatrixView<int64_t>);
EW_REDUCE_ELEMENT_TYPES(EW_SEGMENT_REDUCE_EXTERN)
#undef EW_SEGMENT_REDUCE_EXTERN

}  // namespace edgewise
