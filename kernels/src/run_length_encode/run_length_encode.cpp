// run_length_encode and unique: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/run_length_encode.hpp"

#include <string>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "run_length_encode/run_length_encode_backends.hpp"

namespace edgewise {

namespace rle_detail {

template <class K>
void require_run_capacity(const char* op, int64_t runs, VectorView<K> values, VectorView<int64_t> lengths,
                          bool with_lengths) {
  EW_REQUIRE(values.size >= runs, op, ": values.size() (", values.size, ") is less than the number of runs (",
             runs, "): the capacity must be at least ", runs);
  EW_REQUIRE(!with_lengths || lengths.size >= runs, op, ": lengths.size() (", lengths.size,
             ") is less than the number of runs (", runs, "): the capacity must be at least ", runs);
}

}  // namespace rle_detail

namespace {

constexpr const char* kRle = "run_length_encode";
constexpr const char* kUnique = "unique";

template <class T>
std::size_t bytes_of(VectorView<T> v) {
  return static_cast<std::size_t>(v.size) * sizeof(T);
}

template <class T>
void require_view(const char* op, const std::string& name, VectorView<T> v, const Context& ctx) {
  EW_REQUIRE(v.size >= 0, op, ": ", name, ".size() (", v.size, ") must be >= 0");
  EW_REQUIRE(v.data != nullptr || v.size == 0, op, ": ", name, " is null but has ", v.size, " elements");
  detail::require_device(op, name.c_str(), v.device, ctx);
}

// `single`: the keys came as one vector (named "keys"), not as chunks ("chunks[c]").
template <class K>
void check_arguments(const char* op, std::span<const VectorView<const K>> chunks, bool single, VectorView<K> values,
                     VectorView<int64_t> lengths, bool with_lengths, const Context& ctx) {
  int64_t total = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const std::string name = single ? std::string("keys") : detail::concat("chunks[", c, "]");
    require_view(op, name, chunks[c], ctx);
    EW_REQUIRE(chunks[c].size <= (int64_t{1} << 62) - total, op, ": the chunks hold more than 2^62 keys");
    total += chunks[c].size;
    detail::require_disjoint(op, "values", values.data, bytes_of(values), name.c_str(), chunks[c].data,
                             bytes_of(chunks[c]));
    if (with_lengths) {
      detail::require_disjoint(op, "lengths", lengths.data, bytes_of(lengths), name.c_str(), chunks[c].data,
                               bytes_of(chunks[c]));
    }
  }
  require_view(op, "values", values, ctx);
  if (with_lengths) {
    require_view(op, "lengths", lengths, ctx);
    detail::require_disjoint(op, "values", values.data, bytes_of(values), "lengths", lengths.data,
                             bytes_of(lengths));
  }
}

template <class K>
int64_t encode(const char* op, std::span<const VectorView<const K>> chunks, bool single, VectorView<K> values,
               VectorView<int64_t> lengths, bool with_lengths, Context& ctx) {
  check_arguments(op, chunks, single, values, lengths, with_lengths, ctx);
  if (ctx.device().is_cpu()) return rle_detail::run_length_encode_cpu(op, chunks, values, lengths, with_lengths, ctx);
#if EDGEWISE_WITH_CUDA
  return rle_detail::run_length_encode_cuda(op, chunks, values, lengths, with_lengths, ctx);
#else
  detail::throw_built_without_cuda(op);
#endif
}

// The device a default context is taken for: the first chunk's (the values' when none).
template <class K>
Device device_of(std::span<const VectorView<const K>> chunks, Device fallback) {
  return chunks.empty() ? fallback : chunks.front().device;
}

}  // namespace

template <class K>
int64_t run_length_encode(std::span<const VectorView<const K>> chunks, VectorView<K> values,
                          VectorView<int64_t> lengths, Context& ctx) {
  return encode(kRle, chunks, false, values, lengths, true, ctx);
}

template <class K>
int64_t run_length_encode(VectorView<const K> keys, VectorView<K> values, VectorView<int64_t> lengths,
                          Context& ctx) {
  return encode(kRle, std::span<const VectorView<const K>>(&keys, 1), true, values, lengths, true, ctx);
}

template <class K>
int64_t run_length_encode(std::span<const VectorView<const K>> chunks, VectorView<K> values,
                          VectorView<int64_t> lengths) {
  return run_length_encode(chunks, values, lengths, default_context(device_of(chunks, values.device)));
}

template <class K>
int64_t run_length_encode(VectorView<const K> keys, VectorView<K> values, VectorView<int64_t> lengths) {
  return run_length_encode(keys, values, lengths, default_context(keys.device));
}

template <class K>
int64_t unique(std::span<const VectorView<const K>> chunks, VectorView<K> values, Context& ctx) {
  return encode(kUnique, chunks, false, values, VectorView<int64_t>(), false, ctx);
}

template <class K>
int64_t unique(VectorView<const K> keys, VectorView<K> values, Context& ctx) {
  return encode(kUnique, std::span<const VectorView<const K>>(&keys, 1), true, values, VectorView<int64_t>(), false,
                ctx);
}

template <class K>
int64_t unique(std::span<const VectorView<const K>> chunks, VectorView<K> values) {
  return unique(chunks, values, default_context(device_of(chunks, values.device)));
}

template <class K>
int64_t unique(VectorView<const K> keys, VectorView<K> values) {
  return unique(keys, values, default_context(keys.device));
}

#define EW_INSTANTIATE(K)                                                                                       \
  template int64_t run_length_encode<K>(std::span<const VectorView<const K>>, VectorView<K>, VectorView<int64_t>, \
                                        Context&);                                                              \
  template int64_t run_length_encode<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>, Context&);     \
  template int64_t run_length_encode<K>(std::span<const VectorView<const K>>, VectorView<K>,                    \
                                        VectorView<int64_t>);                                                   \
  template int64_t run_length_encode<K>(VectorView<const K>, VectorView<K>, VectorView<int64_t>);               \
  template int64_t unique<K>(std::span<const VectorView<const K>>, VectorView<K>, Context&);                    \
  template int64_t unique<K>(VectorView<const K>, VectorView<K>, Context&);                                     \
  template int64_t unique<K>(std::span<const VectorView<const K>>, VectorView<K>);                              \
  template int64_t unique<K>(VectorView<const K>, VectorView<K>);                                               \
  template void rle_detail::require_run_capacity<K>(const char*, int64_t, VectorView<K>, VectorView<int64_t>,    \
                                                    bool);
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise
