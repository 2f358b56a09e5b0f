// segment_matmul / grouped_matmul: validation, then one list of products for the CPU or
// CUDA driver.
#include "edgewise/kernels/segment_matmul.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "segment_matmul/segment_matmul_backends.hpp"

namespace edgewise {

namespace {

using detail::require_device;
using segment_matmul_detail::Gemm;

template <class T>
void require_shape(const char* op, const std::string& name, MatrixView<T> m, int64_t rows, int64_t cols) {
  EW_REQUIRE(m.rows == rows && m.cols == cols, op, ": ", name, " must be [", rows, ", ", cols, "] (got [", m.rows,
             ", ", m.cols, "])");
  EW_REQUIRE(m.data != nullptr || m.size() == 0, op, ": ", name, " is null but has ", m.size(), " elements");
}

// ptr [T + 1] on the host: starts at 0, never decreases, ends at `rows`.
void validate_ptr(const char* op, VectorView<const int64_t> ptr, int64_t rows) {
  EW_REQUIRE(ptr.device.is_cpu(), op, ": ptr must be a host array (got one on ", ptr.device.str(), ")");
  EW_REQUIRE(ptr.size >= 1, op, ": ptr must have T + 1 >= 1 elements (got 0)");
  EW_REQUIRE(ptr.data != nullptr, op, ": ptr is null but has ", ptr.size, " elements");
  EW_REQUIRE(ptr[0] == 0, op, ": ptr[0] must be 0 (got ", ptr[0], ")");
  for (int64_t t = 1; t < ptr.size; ++t) {
    EW_REQUIRE(ptr[t] >= ptr[t - 1], op, ": ptr must be nondecreasing (ptr[", t, "] = ", ptr[t], " < ptr[", t - 1,
               "] = ", ptr[t - 1], ")");
  }
  EW_REQUIRE(ptr[ptr.size - 1] == rows, op, ": ptr[T] (ptr[", ptr.size - 1, "] = ", ptr[ptr.size - 1],
             ") must equal x.rows() (", rows, ")");
}

template <class T>
void run([[maybe_unused]] const char* op, std::span<const Gemm<T>> gemms, Context& ctx) {
  if (gemms.empty()) return;
  if (ctx.device().is_cpu()) {
    segment_matmul_detail::grouped_gemm_cpu(gemms);
  } else {
#if EDGEWISE_WITH_CUDA
    segment_matmul_detail::grouped_gemm_cuda(gemms, ctx);
#else
    detail::throw_built_without_cuda(op);
#endif
  }
}

// Byte ranges of the outputs must not meet each other or any input: sorted once, so a
// thousand products cost a sort, not a million comparisons.
struct Range {
  const char* begin;
  const char* end;
  std::string name;
};

void require_no_overlap(const char* op, std::vector<Range> outputs, const std::vector<Range>& inputs) {
  std::erase_if(outputs, [](const Range& r) { return r.begin == r.end; });
  std::sort(outputs.begin(), outputs.end(), [](const Range& x, const Range& y) { return x.begin < y.begin; });
  for (std::size_t i = 1; i < outputs.size(); ++i) {
    EW_REQUIRE(outputs[i].begin >= outputs[i - 1].end, op, ": ", outputs[i - 1].name, " and ", outputs[i].name,
               " overlap (outputs must not share memory)");
  }
  for (const Range& in : inputs) {
    if (in.begin == in.end) continue;
    // The first output ending after `in` begins is the only one that can overlap it
    // first; any overlapping output starts before in.end.
    auto it = std::lower_bound(outputs.begin(), outputs.end(), in.begin,
                               [](const Range& r, const char* p) { return r.end <= p; });
    EW_REQUIRE(it == outputs.end() || it->begin >= in.end, op, ": ", it->name, " overlaps the input ", in.name,
               " (outputs must not share memory with inputs)");
  }
}

template <class T>
Range range_of(MatrixView<T> m, std::string name) {
  const char* p = reinterpret_cast<const char*>(m.data);
  return {p, p + m.size() * static_cast<int64_t>(sizeof(T)), std::move(name)};
}

}  // namespace

template <class T>
void segment_matmul(VectorView<const int64_t> ptr, MatrixView<const T> x, MatrixView<const T> weight,
                    MatrixView<T> out, Context& ctx, bool transpose_weight) {
  constexpr const char* kOp = "segment_matmul";
  validate_ptr(kOp, ptr, x.rows);
  const int64_t types = ptr.size - 1;
  const int64_t n = x.rows, k = x.cols;
  require_shape(kOp, "x", x, n, k);
  EW_REQUIRE(types >= 1, kOp, ": ptr must hold at least one segment (T >= 1; got ptr of 1 element)");
  EW_REQUIRE(weight.rows % types == 0, kOp, ": weight.rows() (", weight.rows, ") must be T * ",
             transpose_weight ? "M" : "K", " with T = ", types, " segments");
  const int64_t m = transpose_weight ? weight.rows / types : weight.cols;
  EW_REQUIRE((transpose_weight ? weight.cols : weight.rows / types) == k, kOp, ": weight must be [T * ",
             transpose_weight ? "M, K" : "K, M", "] with K = x.cols() = ", k, " (got [", weight.rows, ", ",
             weight.cols, "] for T = ", types, ")");
  require_shape(kOp, "weight", weight, weight.rows, weight.cols);
  require_shape(kOp, "out", out, n, m);
  require_device(kOp, "x", x.device, ctx);
  require_device(kOp, "weight", weight.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  detail::require_outputs_disjoint(kOp, {detail::named("out", out)},
                                   {detail::named("x", x), detail::named("weight", weight)});
  std::vector<Gemm<T>> gemms;
  gemms.reserve(static_cast<std::size_t>(types));
  for (int64_t t = 0; t < types; ++t) {
    const int64_t r0 = ptr[t], rows = ptr[t + 1] - ptr[t];
    if (rows == 0) continue;
    gemms.push_back({x.data + r0 * k, weight.data + t * k * m, out.data + r0 * m, rows, m, k, false,
                     transpose_weight});
  }
  run<T>(kOp, gemms, ctx);
}

template <class T>
void segment_matmul_weight_grad(VectorView<const int64_t> ptr, MatrixView<const T> x, MatrixView<const T> grad_out,
                                MatrixView<T> grad_weight, Context& ctx) {
  constexpr const char* kOp = "segment_matmul_weight_grad";
  validate_ptr(kOp, ptr, x.rows);
  const int64_t types = ptr.size - 1;
  const int64_t n = x.rows, k = x.cols, m = grad_out.cols;
  EW_REQUIRE(types >= 1, kOp, ": ptr must hold at least one segment (T >= 1; got ptr of 1 element)");
  require_shape(kOp, "x", x, n, k);
  require_shape(kOp, "grad_out", grad_out, n, m);
  require_shape(kOp, "grad_weight", grad_weight, types * k, m);
  require_device(kOp, "x", x.device, ctx);
  require_device(kOp, "grad_out", grad_out.device, ctx);
  require_device(kOp, "grad_weight", grad_weight.device, ctx);
  detail::require_outputs_disjoint(kOp, {detail::named("grad_weight", grad_weight)},
                                   {detail::named("x", x), detail::named("grad_out", grad_out)});
  std::vector<Gemm<T>> gemms;
  gemms.reserve(static_cast<std::size_t>(types));
  for (int64_t t = 0; t < types; ++t) {
    const int64_t r0 = ptr[t], rows = ptr[t + 1] - ptr[t];
    // A type without rows still gets its zeros (k == 0 products write zeros).
    gemms.push_back({x.data + r0 * k, grad_out.data + r0 * m, grad_weight.data + t * k * m, k, m, rows, true,
                     false});
  }
  run<T>(kOp, gemms, ctx);
}

template <class T>
void grouped_matmul(std::span<const MatrixView<const T>> a, std::span<const MatrixView<const T>> b,
                    std::span<const MatrixView<T>> out, Context& ctx, MatmulTranspose transpose) {
  constexpr const char* kOp = "grouped_matmul";
  EW_REQUIRE(a.size() == b.size() && a.size() == out.size(), kOp, ": a, b and out must have one length (got ",
             a.size(), ", ", b.size(), " and ", out.size(), ")");
  std::vector<Gemm<T>> gemms;
  gemms.reserve(a.size());
  std::vector<Range> outputs, inputs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string ai = "a[" + std::to_string(i) + "]", bi = "b[" + std::to_string(i) + "]",
                      oi = "out[" + std::to_string(i) + "]";
    const int64_t m = transpose.a ? a[i].cols : a[i].rows;
    const int64_t k = transpose.a ? a[i].rows : a[i].cols;
    const int64_t kb = transpose.b ? b[i].cols : b[i].rows;
    const int64_t n = transpose.b ? b[i].rows : b[i].cols;
    EW_REQUIRE(kb == k, kOp, ": ", ai, " and ", bi, " do not chain: op(", ai, ") is [", m, ", ", k, "] but op(", bi,
               ") is [", kb, ", ", n, "]");
    require_shape(kOp, ai, a[i], a[i].rows, a[i].cols);
    require_shape(kOp, bi, b[i], b[i].rows, b[i].cols);
    require_shape(kOp, oi, out[i], m, n);
    require_device(kOp, ai.c_str(), a[i].device, ctx);
    require_device(kOp, bi.c_str(), b[i].device, ctx);
    require_device(kOp, oi.c_str(), out[i].device, ctx);
    outputs.push_back(range_of(out[i], oi));
    inputs.push_back(range_of(a[i], ai));
    inputs.push_back(range_of(b[i], bi));
    gemms.push_back({a[i].data, b[i].data, out[i].data, m, n, k, transpose.a, transpose.b});
  }
  require_no_overlap(kOp, std::move(outputs), inputs);
  run<T>(kOp, gemms, ctx);
}

#define EW_INSTANTIATE(T)                                                                                     \
  template void segment_matmul<T>(VectorView<const int64_t>, MatrixView<const T>, MatrixView<const T>,       \
                                  MatrixView<T>, Context&, bool);                                            \
  template void segment_matmul_weight_grad<T>(VectorView<const int64_t>, MatrixView<const T>,                \
                                              MatrixView<const T>, MatrixView<T>, Context&);                 \
  template void grouped_matmul<T>(std::span<const MatrixView<const T>>, std::span<const MatrixView<const T>>, \
                                  std::span<const MatrixView<T>>, Context&, MatmulTranspose);
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
EW_INSTANTIATE(BFloat16)
#undef EW_INSTANTIATE

}  // namespace edgewise
