// sort_by_key: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/sort_by_key.hpp"

#include <cstdint>
#include <type_traits>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "sort_by_key/sort_by_key_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "sort_by_key";

template <class T>
std::size_t bytes_of(VectorView<T> v) {
  return static_cast<std::size_t>(v.size) * sizeof(T);
}

template <class T>
void require_vector(const char* name, VectorView<T> v, int64_t size, const Context& ctx) {
  EW_REQUIRE(v.size == size, kOp, ": ", name, ".size() (", v.size, ") must equal keys.size() (", size, ")");
  EW_REQUIRE(v.data != nullptr || v.size == 0, kOp, ": ", name, " is null but has ", v.size, " elements");
  detail::require_device(kOp, name, v.device, ctx);
}

template <class K, class T>
void check_arguments(VectorView<const K> keys, const char* extra_in_name, VectorView<const T> extra_in,
                     VectorView<K> sorted_keys, const char* out_name, VectorView<T> out, const Context& ctx) {
  EW_REQUIRE(keys.size >= 0, kOp, ": keys.size() (", keys.size, ") must be >= 0");
  require_vector("keys", keys, keys.size, ctx);
  if (extra_in_name) require_vector(extra_in_name, extra_in, keys.size, ctx);
  require_vector("sorted_keys", sorted_keys, keys.size, ctx);
  require_vector(out_name, out, keys.size, ctx);
  detail::require_disjoint(kOp, "sorted_keys", sorted_keys.data, bytes_of(sorted_keys), "keys", keys.data,
                           bytes_of(keys));
  detail::require_disjoint(kOp, out_name, out.data, bytes_of(out), "keys", keys.data, bytes_of(keys));
  detail::require_disjoint(kOp, out_name, out.data, bytes_of(out), "sorted_keys", sorted_keys.data,
                           bytes_of(sorted_keys));
  if (extra_in_name) {
    detail::require_disjoint(kOp, out_name, out.data, bytes_of(out), extra_in_name, extra_in.data,
                             bytes_of(extra_in));
    detail::require_disjoint(kOp, "sorted_keys", sorted_keys.data, bytes_of(sorted_keys), extra_in_name,
                             extra_in.data, bytes_of(extra_in));
  }
}

// Values move as bits of their width.
template <class V>
using PayloadOf = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;
}  // namespace

template <class K>
void sort_by_key(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation,
                 Context& ctx) {
  check_arguments<K, int64_t>(keys, nullptr, {}, sorted_keys, "permutation", permutation, ctx);
  if (keys.size == 0) return;
  if (ctx.device().is_cpu()) {
    sort_by_key_detail::sort_by_key_cpu(keys, sorted_keys, permutation, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    sort_by_key_detail::sort_by_key_cuda(keys, sorted_keys, permutation, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class K>
void sort_by_key(VectorView<const K> keys, VectorView<K> sorted_keys, VectorView<int64_t> permutation) {
  sort_by_key(keys, sorted_keys, permutation, default_context(keys.device));
}

template <class K, class V>
void sort_by_key(VectorView<const K> keys, VectorView<const V> values, VectorView<K> sorted_keys,
                 VectorView<V> sorted_values, Context& ctx) {
  static_assert(sizeof(V) == 4 || sizeof(V) == 8, "values move as 4- or 8-byte words");
  check_arguments<K, V>(keys, "values", values, sorted_keys, "sorted_values", sorted_values, ctx);
  if (keys.size == 0) return;
  using P = PayloadOf<V>;
  VectorView<const P> in(reinterpret_cast<const P*>(values.data), values.size, values.device);
  VectorView<P> out(reinterpret_cast<P*>(sorted_values.data), sorted_values.size, sorted_values.device);
  if (ctx.device().is_cpu()) {
    sort_by_key_detail::sort_by_key_values_cpu(keys, in, sorted_keys, out, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    sort_by_key_detail::sort_by_key_values_cuda(keys, in, sorted_keys, out, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class K, class V>
void sort_by_key(VectorView<const K> keys, VectorView<const V> values, VectorView<K> sorted_keys,
                 VectorView<V> sorted_values) {
  sort_by_key(keys, values, sorted_keys, sorted_values, default_context(keys.device));
}

#define EW_INSTANTIATE(K)                                                                          \
  template void sort_by_key<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>, Context&); \
  template void sort_by_key<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>);
#define EW_INSTANTIATE_VALUES(K, V)                                                                           \
  template void sort_by_key<K, V>(VectorView<const K>, VectorView<const V>, VectorView<K>, VectorView<V>,   \
                                  Context&);                                                                  \
  template void sort_by_key<K, V>(VectorView<const K>, VectorView<const V>, VectorView<K>, VectorView<V>);
#define EW_INSTANTIATE_ALL(K)          \
  EW_INSTANTIATE(K)                    \
  EW_INSTANTIATE_VALUES(K, int32_t)    \
  EW_INSTANTIATE_VALUES(K, uint32_t)   \
  EW_INSTANTIATE_VALUES(K, int64_t)    \
  EW_INSTANTIATE_VALUES(K, float)      \
  EW_INSTANTIATE_VALUES(K, double)
EW_INSTANTIATE_ALL(uint32_t)
EW_INSTANTIATE_ALL(int32_t)
EW_INSTANTIATE_ALL(int64_t)
#undef EW_INSTANTIATE_ALL
#undef EW_INSTANTIATE_VALUES
#undef EW_INSTANTIATE

}  // namespace edgewise
