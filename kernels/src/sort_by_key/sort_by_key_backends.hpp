// sort_by_key backend entry points (arguments already validated by sort_by_key.cpp).
// Caller values travel as their bits: P is uint32_t or uint64_t, the width of V.
#pragma once

#include "edgewise/kernels/sort_by_key.hpp"

namespace edgewise::sort_by_key_detail {

template <class K>
void sort_by_key_cpu(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                     Context& ctx);
template <class K, class P>
void sort_by_key_values_cpu(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                            VectorView<P> sorted_values, Context& ctx);

template <class K>
void sort_by_key_cuda(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                      Context& ctx);
template <class K, class P>
void sort_by_key_values_cuda(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                             VectorView<P> sorted_values, Context& ctx);

}  // namespace edgewise::sort_by_key_detail
