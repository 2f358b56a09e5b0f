// scatter_reduce: reduce each row of values into the output row its index names.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/element_types.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: M rows of C features (C >= 1), S outputs (segments).
//
// values [M, C]  float, double, int32_t, uint32_t, int64_t, Half or BFloat16
//                (EW_REDUCE_ELEMENT_TYPES, common/element_types.hpp).
// index  [M]     int32_t or int64_t, in any order; row r goes to output index[r],
//                which must lie in [0, S). Needs no sorting (segment_reduce is the
//                path for rows already grouped by output).
// out    [S, C]  overwritten: out[s, c] = op over the rows r with index[r] == s of
//                values[r, c], with the semantics of segment_reduce: sum/mean of
//                int32 / int64 accumulate in int64 (uint32 in uint64) and int32 wraps
//                on output; integer means round toward -inf (floor); Half / BFloat16
//                accumulate in float and round once, on output; an output no row
//                reaches writes the op's empty value (as segment_reduce: 0 for sum,
//                mean, min, max).
// arg    [S, C]  optional (pass a default-constructed view to skip), min/max only:
//                the row of the winning element; ties -> the lower row; NaN beats
//                every number; an output no row reaches writes -1. The value
//                written to out is values[arg, c] bit for bit (so -0 stays -0 and
//                a NaN keeps its payload).
//
// Limits: min and max (with or without arg) resolve value and row in one 64-bit
// word, (order-preserving key << 32) | ~row (common/monotone.hpp), on both
// devices, so they need M <= 2^32 - 1; a larger M is rejected with
// std::invalid_argument (no fallback). Half / BFloat16 use the word with their float
// value's key. double and int64 keep the same limit (their CPU state stores rows in
// 32 bits); their 64-bit key does not fit the word, so CUDA resolves their min/max in
// two passes (atomicMax of the key, then atomicMin of the row among the elements
// holding the winning key) with the same result.
//
// Reproducibility:
//  - integer sum/mean and every min/max (value and arg): identical on every run,
//    at any thread count, on both devices (integer addition is exact; the winner
//    of a min/max does not depend on the order elements arrive in).
//  - float sum/mean on CPU: bitwise identical across runs with the same number of
//    OpenMP threads (static partition of rows, partials merged in thread order);
//    a different thread count may change the last bits (double likewise).
//  - float/double sum/mean on CUDA: one atomicAdd per element, so the order and the last
//    bits vary from run to run. Use segment_reduce when that matters.
//
// out and arg must not overlap values, index or each other (checked with
// ctx.validate: std::invalid_argument "... overlap in memory").
//
// All views must live on ctx.device(). With ctx.validate (the default) every
// index is checked before anything is written; a bad one throws
// std::invalid_argument naming its position and value
// ("scatter_reduce: index[17] (12) must lie in [0, 10)"), and out/arg are left
// exactly as they were. Shapes, devices and the M limit are always checked.
template <class T, class I>
void scatter_reduce(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                    MatrixView<int64_t> arg, Context& ctx);

// The same on a per-thread default context for the views' device.
template <class T, class I>
void scatter_reduce(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                    MatrixView<int64_t> arg = {});

// scatter_reduce_transposed: the same reduction with values and results transposed, as
// when the last dimension of a row-major tensor is reduced (torch_scatter's dim = -1):
// values_t [C, M] holds column c of the problem in row c, out_t and arg_t are [C, S]
// (out_t[c, s] = out[s, c]); arg still names the winning row r in [0, M). Semantics,
// limits, checks and messages as scatter_reduce (shapes named in this layout), and the
// results equal scatter_reduce's on the transposed inputs bit for bit for integer
// ops and min/max; float sum/mean are reproducible for a fixed thread count. On the
// CPU the columns are split among threads and tiles of rows are transposed in cache,
// so values are read once; on CUDA it transposes in device memory around scatter_reduce.
template <class T, class I>
void scatter_reduce_transposed(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                               MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx);

#define EW_SCATTER_REDUCE_EXTERN_INDEX(T, I)                                                               \
  extern template void scatter_reduce<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                            MatrixView<int64_t>, Context&);                                \
  extern template void scatter_reduce<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                            MatrixView<int64_t>);                                \
  extern template void scatter_reduce_transposed<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp,     \
                                                       MatrixView<T>, MatrixView<int64_t>, Context&);
#define EW_SCATTER_REDUCE_EXTERN(T) \
  EW_SCATTER_REDUCE_EXTERN_INDEX(T, int32_t) EW_SCATTER_REDUCE_EXTERN_INDEX(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_SCATTER_REDUCE_EXTERN)
#undef EW_SCATTER_REDUCE_EXTERN
#undef EW_SCATTER_REDUCE_EXTERN_INDEX

}  // namespace edgewise
