// segment_reduce: reduce the rows of each offset-delimited segment.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: M rows of C features (C >= 1), S segments.
//
// values  [M, C]   float, double, int32_t or uint32_t.
// offsets [S + 1]  int64; offsets[0] == 0, offsets[S] == M, nondecreasing. Segment s
//                  owns rows [offsets[s], offsets[s+1]); equal neighbours = empty segment.
// out     [S, C]   overwritten: out[s, c] = op over rows r of segment s of values[r, c].
//                  sum/mean of float (double) accumulate in float (double) in a fixed order, so a result is
//                  bitwise identical across runs and thread counts on the same device;
//                  int32 sums accumulate in int64 and wrap on output; integer means truncate.
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

extern template void segment_reduce<float>(MatrixView<const float>, VectorView<const int64_t>,
                                           ReduceOp, MatrixView<float>, MatrixView<int64_t>, Context&);
extern template void segment_reduce<double>(MatrixView<const double>, VectorView<const int64_t>,
                                            ReduceOp, MatrixView<double>, MatrixView<int64_t>, Context&);
extern template void segment_reduce<int32_t>(MatrixView<const int32_t>, VectorView<const int64_t>,
                                             ReduceOp, MatrixView<int32_t>, MatrixView<int64_t>,
                                             Context&);
extern template void segment_reduce<uint32_t>(MatrixView<const uint32_t>, VectorView<const int64_t>,
                                              ReduceOp, MatrixView<uint32_t>, MatrixView<int64_t>,
                                              Context&);
extern template void segment_reduce<float>(MatrixView<const float>, VectorView<const int64_t>,
                                           ReduceOp, MatrixView<float>, MatrixView<int64_t>);
extern template void segment_reduce<double>(MatrixView<const double>, VectorView<const int64_t>,
                                            ReduceOp, MatrixView<double>, MatrixView<int64_t>);
extern template void segment_reduce<int32_t>(MatrixView<const int32_t>, VectorView<const int64_t>,
                                             ReduceOp, MatrixView<int32_t>, MatrixView<int64_t>);
extern template void segment_reduce<uint32_t>(MatrixView<const uint32_t>, VectorView<const int64_t>,
                                              ReduceOp, MatrixView<uint32_t>, MatrixView<int64_t>);

}  // namespace edgewise
