// run_length_encode and unique: adjacent runs of equal keys -> run values, lengths, count.
#pragma once

#include <cstdint>
#include <span>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: N keys in total, R runs (0 <= R <= N).
//
// keys     [N]  uint32_t, int32_t or int64_t, as one vector or as a sequence of
//               chunks (separate arrays forming one logical vector, in order; any
//               chunk may be empty). Keys are taken as given, never sorted: a run is
//               a maximal stretch of adjacent equal keys, so [2, 2, 5, 2] has three
//               runs (2, 5, 2). Sort first (sort_by_key) for global grouping. A run
//               continues across chunk seams, also across empty chunks: the key
//               before a chunk's first key is the last key of the previous
//               nonempty chunk. (Float keys are not offered: with NaN != NaN
//               "equal" would need a definition of its own.)
// values   [>= R]  caller-owned capacity: values[r] is the key of run r, runs in
//               order of first occurrence.
// lengths  [>= R]  int64, caller-owned capacity: lengths[r] is the number of keys in
//               run r (>= 1; the lengths sum to N). Run r covers global positions
//               [sum of lengths[0..r), + lengths[r]), counted across all chunks.
// returns  R.   Only values[0, R) and lengths[0, R) are written; elements from R on
//               keep whatever they held. Empty input (no chunks, or only empty
//               chunks) returns 0 and writes nothing.
//
// All views must live on ctx.device() (CUDA: the chunk list itself is a host span of
// device views; R is read back to the host). Outputs must not overlap the keys or
// each other. A capacity below R throws std::invalid_argument naming it, before
// anything is written, as does any other bad argument; outputs are then left exactly
// as they were. Scratch (ctx.scratch): about N / 8 x (sizeof(K) + 8) bytes on CPU,
// N x 8 bytes plus CUB's temporary storage on CUDA.
template <class K>
int64_t run_length_encode(std::span<const VectorView<const K>> chunks, VectorView<K> values,
                          VectorView<int64_t> lengths, Context& ctx);
template <class K>
int64_t run_length_encode(VectorView<const K> keys, VectorView<K> values, VectorView<int64_t> lengths,
                          Context& ctx);
// The same on a per-thread default context for the keys' device.
template <class K>
int64_t run_length_encode(std::span<const VectorView<const K>> chunks, VectorView<K> values,
                          VectorView<int64_t> lengths);
template <class K>
int64_t run_length_encode(VectorView<const K> keys, VectorView<K> values, VectorView<int64_t> lengths);

// unique: the same runs, values only (the same definition of a run; not a global
// de-duplication of unsorted keys). values[r] for r < R; returns R.
template <class K>
int64_t unique(std::span<const VectorView<const K>> chunks, VectorView<K> values, Context& ctx);
template <class K>
int64_t unique(VectorView<const K> keys, VectorView<K> values, Context& ctx);
template <class K>
int64_t unique(std::span<const VectorView<const K>> chunks, VectorView<K> values);
template <class K>
int64_t unique(VectorView<const K> keys, VectorView<K> values);

#define EW_RLE_DECLARE(K)                                                                                       \
  extern template int64_t run_length_encode<K>(std::span<const VectorView<const K>>, VectorView<K>,          \
                                               VectorView<int64_t>, Context&);                                \
  extern template int64_t run_length_encode<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>,       \
                                               Context&);                                                     \
  extern template int64_t run_length_encode<K>(std::span<const VectorView<const K>>, VectorView<K>,          \
                                               VectorView<int64_t>);                                          \
  extern template int64_t run_length_encode<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>);      \
  extern template int64_t unique<K>(std::span<const VectorView<const K>>, VectorView<K>, Context&);          \
  extern template int64_t unique<K>(VectorView<const K>, VectorView<K>, Context&);                           \
  extern template int64_t unique<K>(std::span<const VectorView<const K>>, VectorView<K>);                    \
  extern template int64_t unique<K>(VectorView<const K>, VectorView<K>);
EW_RLE_DECLARE(uint32_t)
EW_RLE_DECLARE(int32_t)
EW_RLE_DECLARE(int64_t)
#undef EW_RLE_DECLARE

}  // namespace edgewise
