// sort_by_key: stable radix sort of integer keys, carrying a permutation or caller values.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/view.hpp"

namespace edgewise {

// Sizes: E keys (E >= 0; E edges when sorting an edge list by destination).
//
// keys         [E]  uint32_t, int32_t or int64_t, in any order. Signed keys sort
//                   numerically (negative before positive).
// sorted_keys  [E]  overwritten: the keys in nondecreasing order.
// permutation  [E]  int64, overwritten: permutation[j] is the position in `keys` of
//                   the j-th sorted key, so sorted_keys[j] == keys[permutation[j]].
//                   The sort is stable: equal keys keep their input order, i.e.
//                   permutation is increasing within each run of equal keys. The
//                   result is therefore unique and the same on every device and
//                   at every thread count.
//
// Work is proportional to E times the number of key bits that vary (bits that are
// equal in every key are skipped), so small ids such as node ids sort in few passes.
//
// All views must live on ctx.device(); outputs must not overlap the input or each
// other. Arguments are checked before anything is written; a bad one throws
// std::invalid_argument naming it and leaves the outputs exactly as they were.
// Scratch (ctx.scratch): up to 2 x E x 8 bytes on CPU (x 16 when the varying key
// bits and the bits of an index exceed 64); on CUDA E x 8 bytes plus CUB's storage.
template <class K>
void sort_by_key(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation, Context& ctx);

// The same on a per-thread default context for the keys' device.
template <class K>
void sort_by_key(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation);

// Values form: sorted_values[j] = values[permutation[j]] for the permutation above
// (values [E] of V = int32_t, uint32_t, int64_t, float or double, moved bit for bit),
// e.g. the source ids of an edge list sorted by destination. The permutation itself
// is not returned.
template <class K, class V>
void sort_by_key(VectorView<const K> keys, VectorView<const V> values, VectorView<K> sorted_keys,
                 VectorView<V> sorted_values, Context& ctx);

template <class K, class V>
void sort_by_key(VectorView<const K> keys, VectorView<const V> values, VectorView<K> sorted_keys,
                 VectorView<V> sorted_values);

#define EW_SORT_BY_KEY_DECLARE(K)                                                                          \
  extern template void sort_by_key<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>, Context&); \
  extern template void sort_by_key<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>);
#define EW_SORT_BY_KEY_VALUES_DECLARE(K, V)                                                              \
  extern template void sort_by_key<K, V>(VectorView<const K>, VectorView<const V>, VectorView<K>,      \
                                         VectorView<V>, Context&);                                       \
  extern template void sort_by_key<K, V>(VectorView<const K>, VectorView<const V>, VectorView<K>,      \
                                         VectorView<V>);
#define EW_SORT_BY_KEY_DECLARE_ALL(K)        \
  EW_SORT_BY_KEY_DECLARE(K)                  \
  EW_SORT_BY_KEY_VALUES_DECLARE(K, int32_t)  \
  EW_SORT_BY_KEY_VALUES_DECLARE(K, uint32_t) \
  EW_SORT_BY_KEY_VALUES_DECLARE(K, int64_t)  \
  EW_SORT_BY_KEY_VALUES_DECLARE(K, float)    \
  EW_SORT_BY_KEY_VALUES_DECLARE(K, double)
EW_SORT_BY_KEY_DECLARE_ALL(uint32_t)
EW_SORT_BY_KEY_DECLARE_ALL(int32_t)
EW_SORT_BY_KEY_DECLARE_ALL(int64_t)
#undef EW_SORT_BY_KEY_DECLARE_ALL
#undef EW_SORT_BY_KEY_VALUES_DECLARE
#undef EW_SORT_BY_KEY_DECLARE

}  // namespace edgewise
