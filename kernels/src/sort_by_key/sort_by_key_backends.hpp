// sort_by_key backend entry points (arguments already validated by sort_by_key.cpp).
// Caller values travel as their bits: P is uint32_t or uint64_t, the width of V.
#pragma once

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/sort_by_key.hpp"

namespace edgewise::sort_by_key_detail {

// The CPU driver, one copy per ISA level (sort_by_key_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class K>
    void sort_by_key_cpu(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                         Context& ctx);
    template <class K, class P>
    void sort_by_key_values_cpu(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                                VectorView<P> sorted_values, Context& ctx);)

// The copy for cpu_isa().
template <class K>
void sort_by_key_cpu(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                     Context& ctx) {
  EW_DISPATCH_CPU_ISA(sort_by_key_cpu, keys, sorted_keys, permutation, ctx);
}
template <class K, class P>
void sort_by_key_values_cpu(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                            VectorView<P> sorted_values, Context& ctx) {
  EW_DISPATCH_CPU_ISA(sort_by_key_values_cpu, keys, values, sorted_keys, sorted_values, ctx);
}

template <class K>
void sort_by_key_cuda(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                      Context& ctx);
template <class K, class P>
void sort_by_key_values_cuda(VectorView<const K> keys, VectorView<const P> values, VectorView<K> sorted_keys,
                             VectorView<P> sorted_values, Context& ctx);

}  // namespace edgewise::sort_by_key_detail
