// offsets_from_keys backend entry points (arguments already validated by
// offsets_from_keys.cpp, which also formats the key-check errors).
#pragma once

#include "edgewise/kernels/offsets_from_keys.hpp"

namespace edgewise::offsets_detail {

// The first position whose key is out of [0, segments) or below its predecessor;
// -1 when every key is fine.
template <class K>
int64_t first_bad_key_cpu(VectorView<const K> keys, int64_t segments);
template <class K>
int64_t first_bad_key_cuda(VectorView<const K> keys, int64_t segments, Context& ctx);

template <class K>
void offsets_from_keys_cpu(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx);
template <class K>
void offsets_from_keys_cuda(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx);

}  // namespace edgewise::offsets_detail
