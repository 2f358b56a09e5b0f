// Boundary checks shared by the primitives' dispatch code.
#include "common/validate.hpp"

#include "common/cuda_backend.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::detail {

void require_device(const char* op, const char* name, Device actual, const Context& ctx) {
  EW_REQUIRE(actual == ctx.device(), op, ": ", name, " is on ", actual.str(), " but the context is on ",
             ctx.device().str(), " (views are never copied between devices implicitly)");
  // Every primitive checks its views here before its first launch: a CUDA device
  // that cannot be used fails now, with the reason, not in the driver.
  require_available(actual, op);
}

void require_disjoint(const char* op, const char* a_name, const void* a_data, std::size_t a_bytes,
                      const char* b_name, const void* b_data, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return;
  const auto a = reinterpret_cast<std::uintptr_t>(a_data);
  const auto b = reinterpret_cast<std::uintptr_t>(b_data);
  EW_REQUIRE(a + a_bytes <= b || b + b_bytes <= a, op, ": ", a_name, " and ", b_name,
             " overlap in memory (outputs must not share memory with the input or with each other)");
}

void require_outputs_disjoint(const char* op, std::initializer_list<NamedBytes> outputs,
                              std::initializer_list<NamedBytes> inputs) {
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (const NamedBytes& in : inputs) require_disjoint(op, out->name, out->data, out->bytes, in.name, in.data, in.bytes);
    for (auto other = out + 1; other != outputs.end(); ++other) {
      require_disjoint(op, out->name, out->data, out->bytes, other->name, other->data, other->bytes);
    }
  }
}

void validate_offsets(const char* op, const char* name, VectorView<const int64_t> offsets,
                      int64_t rows, [[maybe_unused]] Context& ctx) {  // ctx: CUDA builds only
  EW_REQUIRE(offsets.size >= 1, op, ": ", name, ".size() (", offsets.size, ") must be at least 1");
  const int64_t last = offsets.size - 1;
  if (offsets.device.is_cuda()) {
#if EDGEWISE_WITH_CUDA
    int64_t bad = first_bad_offset_cuda(offsets, rows, ctx);
    if (bad < 0) return;
    int64_t value = 0;
    copy_bytes(&value, Device::cpu(), offsets.data + bad, offsets.device, sizeof(value), ctx.stream());
    offsets = VectorView<const int64_t>();  // host copies only from here on
    EW_REQUIRE(bad != 0, op, ": ", name, "[0] (", value, ") must be 0");
    EW_REQUIRE(bad != last, op, ": ", name, "[", last, "] (", value, ") must equal the number of rows (",
               rows, ")");
    throw_invalid_argument(op, ": ", name, "[", bad, "] (", value, ") must lie in [", name, "[",
                           bad - 1, "], ", rows, "] (offsets must be nondecreasing and in range)");
#else
    throw_built_without_cuda(op);
#endif
  }
  EW_REQUIRE(offsets[0] == 0, op, ": ", name, "[0] (", offsets[0], ") must be 0");
  for (int64_t i = 1; i <= last; ++i) {
    EW_REQUIRE(offsets[i] >= offsets[i - 1] && offsets[i] <= rows, op, ": ", name, "[", i, "] (",
               offsets[i], ") must lie in [", name, "[", i - 1, "] (", offsets[i - 1], "), ", rows,
               "] (offsets must be nondecreasing and in range)");
  }
  EW_REQUIRE(offsets[last] == rows, op, ": ", name, "[", last, "] (", offsets[last],
             ") must equal the number of rows (", rows, ")");
}

}  // namespace edgewise::detail
