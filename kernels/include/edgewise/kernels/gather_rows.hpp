// gather_rows: copy whole rows to the output rows an index or offsets assign them
// (torch_scatter's gather_coo / gather_csr, the inverse direction of the reductions).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/element_types.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: A batches (A >= 0), each of S source rows of C features (C >= 1); the output
// has M rows per batch (gather_rows_csr) or E (gather_rows_coo). Batch a's rows are
// rows [a * S, (a + 1) * S) of values and [a * M, (a + 1) * M) of out. Every element
// type of EW_REDUCE_ELEMENT_TYPES (common/element_types.hpp); elements are copied
// bit for bit (NaN payloads included).
//
// gather_rows_csr: spread segment s of batch a over the output rows offsets assign it.
// values  [A * S, C]
// offsets [Ao, S + 1]  int64, Ao == 1 (one set of offsets for every batch) or Ao == A;
//                      each row nondecreasing and within [0, M]. Unlike segment_reduce's,
//                      offsets[., 0] may exceed 0 and offsets[., S] may fall short of M.
// out     [A * M, C]   overwritten: out[a * M + r] = values[a * S + s] for r in
//                      [offsets[ao, s], offsets[ao, s + 1]) (ao = a, or 0 when Ao == 1);
//                      rows outside [offsets[ao, 0], offsets[ao, S]) are written 0.
template <class T>
void gather_rows_csr(MatrixView<const T> values, MatrixView<const int64_t> offsets, MatrixView<T> out,
                     int64_t batches, Context& ctx);

// gather_rows_coo: pick rows by index.
// values [A * S, C]
// index  [Ai, E]      int32 or int64 (EW_REDUCE_INDEX_TYPES), Ai == 1 (shared) or Ai == A;
//                     every element in [0, S); any order, repeats allowed.
// out    [A * E, C]   overwritten: out[a * E + e] = values[a * S + index[ai, e]].
//
// Both: out must not overlap values or offsets / index. All views must live on
// ctx.device(). With ctx.validate (the default) every argument is checked before
// anything is written; a bad one throws std::invalid_argument naming it (and, for
// offsets or index contents, the first bad position), and out is left as it was —
// except that with ctx.outputs_fresh gather_rows_coo on the CPU checks the index as it
// copies (the same error, out then partly written).
template <class T, class I>
void gather_rows_coo(MatrixView<const T> values, MatrixView<const I> index, MatrixView<T> out, int64_t batches,
                     Context& ctx);

// The same on a per-thread default context for the views' device.
template <class T>
void gather_rows_csr(MatrixView<const T> values, MatrixView<const int64_t> offsets, MatrixView<T> out,
                     int64_t batches = 1);
template <class T, class I>
void gather_rows_coo(MatrixView<const T> values, MatrixView<const I> index, MatrixView<T> out,
                     int64_t batches = 1);

#define EW_GATHER_ROWS_COO_EXTERN(T, I)                                                                        \
  extern template void gather_rows_coo<T, I>(MatrixView<const T>, MatrixView<const I>, MatrixView<T>, int64_t, \
                                             Context&);                                                        \
  extern template void gather_rows_coo<T, I>(MatrixView<const T>, MatrixView<const I>, MatrixView<T>, int64_t);
#define EW_GATHER_ROWS_EXTERN(T)                                                                                      \
  extern template void gather_rows_csr<T>(MatrixView<const T>, MatrixView<const int64_t>, MatrixView<T>, int64_t, \
                                          Context&);                                                              \
  extern template void gather_rows_csr<T>(MatrixView<const T>, MatrixView<const int64_t>, MatrixView<T>, int64_t);  \
  EW_GATHER_ROWS_COO_EXTERN(T, int32_t)                                                                           \
  EW_GATHER_ROWS_COO_EXTERN(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_GATHER_ROWS_EXTERN)
#undef EW_GATHER_ROWS_EXTERN
#undef EW_GATHER_ROWS_COO_EXTERN

}  // namespace edgewise
