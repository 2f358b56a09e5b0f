// offsets_from_keys: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/offsets_from_keys.hpp"

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "offsets_from_keys/offsets_from_keys_backends.hpp"
#include "offsets_from_keys/offsets_from_keys_core.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "offsets_from_keys";

// Throws naming the first bad key, read from the keys' device.
template <class K>
void validate_keys(VectorView<const K> keys, int64_t segments, Context& ctx) {
  int64_t bad = -1;
  if (ctx.device().is_cpu()) {
    bad = offsets_detail::first_bad_key_cpu(keys, segments);
  } else {
#if EDGEWISE_WITH_CUDA
    bad = offsets_detail::first_bad_key_cuda(keys, segments, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
  if (bad < 0) return;
  // h_pair = {keys[bad - 1], keys[bad]} (or {keys[0]} when bad == 0), on the host.
  K h_pair[2] = {K{}, K{}};
  const int64_t first = bad > 0 ? bad - 1 : 0;
  copy_bytes(h_pair, Device::cpu(), keys.data + first, keys.device, static_cast<std::size_t>(bad - first + 1) * sizeof(K),
             ctx.stream());
  const int64_t at = bad - first;  // where keys[bad] sits in h_pair
  const auto status = offsets_detail::key_status(h_pair, at, segments);
  EW_REQUIRE(status != offsets_detail::KeyStatus::OutOfRange, kOp, ": keys[", bad, "] (", +h_pair[at],
             ") must lie in [0, ", segments, ")");
  detail::throw_invalid_argument(kOp, ": keys[", bad, "] (", +h_pair[at], ") is less than keys[", bad - 1, "] (",
                                 +h_pair[0], "): keys must be sorted (nondecreasing)");
}

template <class K>
void check_arguments(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx) {
  EW_REQUIRE(keys.size >= 0, kOp, ": keys.size() (", keys.size, ") must be >= 0");
  EW_REQUIRE(keys.data != nullptr || keys.size == 0, kOp, ": keys is null but has ", keys.size, " elements");
  EW_REQUIRE(offsets.size >= 1, kOp, ": offsets.size() (", offsets.size,
             ") must be at least 1 (S + 1 offsets for S segments)");
  EW_REQUIRE(offsets.data != nullptr, kOp, ": offsets is null but has ", offsets.size, " elements");
  detail::require_device(kOp, "keys", keys.device, ctx);
  detail::require_device(kOp, "offsets", offsets.device, ctx);
  detail::require_disjoint(kOp, "offsets", offsets.data, static_cast<std::size_t>(offsets.size) * sizeof(int64_t),
                           "keys", keys.data, static_cast<std::size_t>(keys.size) * sizeof(K));
  if (ctx.validate) validate_keys(keys, offsets.size - 1, ctx);
}
}  // namespace

template <class K>
void offsets_from_keys(VectorView<const K> keys, VectorView<int64_t> offsets, Context& ctx) {
  check_arguments(keys, offsets, ctx);
  if (ctx.device().is_cpu()) {
    offsets_detail::offsets_from_keys_cpu(keys, offsets, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    offsets_detail::offsets_from_keys_cuda(keys, offsets, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class K>
void offsets_from_keys(VectorView<const K> keys, VectorView<int64_t> offsets) {
  offsets_from_keys(keys, offsets, default_context(keys.device));
}

#define EW_INSTANTIATE(K)                                                                   \
  template void offsets_from_keys<K>(VectorView<const K>, VectorView<int64_t>, Context&); \
  template void offsets_from_keys<K>(VectorView<const K>, VectorView<int64_t>);
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
EW_INSTANTIATE(uint32_t)
#undef EW_INSTANTIATE

}  // namespace edgewise
