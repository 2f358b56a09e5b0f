// sddmm and edge_gather_sum: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/sddmm.hpp"

#include <algorithm>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "sddmm/sddmm_backends.hpp"
#include "common/index_range.hpp"

namespace edgewise {

namespace {

using detail::require_device;

using detail::validate_index_range;

template <class T>
void require_shape(const char* op, const char* name, MatrixView<T> m, int64_t rows, int64_t cols) {
  EW_REQUIRE(m.rows == rows && m.cols == cols, op, ": ", name, " must be [", rows, ", ", cols, "] (got [", m.rows,
             ", ", m.cols, "])");
  EW_REQUIRE(m.data != nullptr || m.size() == 0, op, ": ", name, " is null but has ", m.size(), " elements");
}

// The checks both per-edge forms share: the CSR (offsets [S+1] over E = indices.size()
// edges, sources in [0, N)), heads >= 1 and every view on ctx's device.
template <class I>
void validate_edge_csr(const char* op, VectorView<const int64_t> offsets, VectorView<const I> indices,
                       int64_t sources, int64_t heads, Context& ctx) {
  EW_REQUIRE(offsets.size >= 1, op, ": offsets must have S + 1 >= 1 elements (got 0)");
  EW_REQUIRE(heads >= 1, op, ": out.cols() (heads, ", heads, ") must be >= 1");
  EW_REQUIRE(indices.data != nullptr || indices.size == 0, op, ": indices is null but has ", indices.size,
             " elements");
  require_device(op, "offsets", offsets.device, ctx);
  require_device(op, "indices", indices.device, ctx);
  if (ctx.validate) {
    detail::validate_offsets(op, "offsets", offsets, indices.size, ctx);
    validate_index_range(op, "indices", indices, sources, "the source rows", ctx);
  }
}

template <class I>
sddmm_detail::EdgeCsr<I> edge_csr(VectorView<const int64_t> offsets, VectorView<const I> indices) {
  return {offsets.data, offsets.size - 1, indices.data, indices.size};
}

}  // namespace

template <class T, class I>
void sddmm_dot(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> x,
               MatrixView<const T> y, MatrixView<T> out, Context& ctx) {
  constexpr const char* kOp = "sddmm_dot";
  const int64_t E = indices.size;
  const int64_t S = offsets.size - 1;
  const int64_t H = out.cols;
  EW_REQUIRE(H >= 1, kOp, ": out.cols() (heads, ", H, ") must be >= 1");
  EW_REQUIRE(x.cols >= 1 && x.cols % H == 0, kOp, ": x.cols() (", x.cols, ") must be a positive multiple of heads (",
             H, ")");
  require_shape(kOp, "x", x, x.rows, x.cols);
  require_shape(kOp, "y", y, S, x.cols);
  require_shape(kOp, "out", out, E, H);
  require_device(kOp, "x", x.device, ctx);
  require_device(kOp, "y", y.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  validate_edge_csr(kOp, offsets, indices, x.rows, H, ctx);
  if (E == 0) return;
  const auto g = edge_csr(offsets, indices);
  if (ctx.device().is_cpu()) {
    sddmm_detail::sddmm_dot_cpu(g, x.data, y.data, H, x.cols / H, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    sddmm_detail::sddmm_dot_cuda(g, x.data, y.data, H, x.cols / H, out.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T, class I>
void sddmm_add(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> a,
               MatrixView<const T> b, MatrixView<T> out, Context& ctx) {
  constexpr const char* kOp = "sddmm_add";
  const int64_t E = indices.size;
  const int64_t S = offsets.size - 1;
  const int64_t H = out.cols;
  EW_REQUIRE(H >= 1, kOp, ": out.cols() (heads, ", H, ") must be >= 1");
  require_shape(kOp, "a", a, a.rows, H);
  require_shape(kOp, "b", b, S, H);
  require_shape(kOp, "out", out, E, H);
  require_device(kOp, "a", a.device, ctx);
  require_device(kOp, "b", b.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  validate_edge_csr(kOp, offsets, indices, a.rows, H, ctx);
  if (E == 0) return;
  const auto g = edge_csr(offsets, indices);
  if (ctx.device().is_cpu()) {
    sddmm_detail::sddmm_add_cpu(g, a.data, b.data, H, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    sddmm_detail::sddmm_add_cuda(g, a.data, b.data, H, out.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T, class I>
void edge_gather_sum(VectorView<const int64_t> offsets, VectorView<const I> indices,
                     VectorView<const int64_t> edge_ids, MatrixView<const T> w, MatrixView<const T> x,
                     MatrixView<T> out, Context& ctx) {
  constexpr const char* kOp = "edge_gather_sum";
  const int64_t R = offsets.size - 1;
  const int64_t H = w.cols;
  EW_REQUIRE(offsets.size >= 1, kOp, ": offsets must have R + 1 >= 1 elements (got 0)");
  EW_REQUIRE(H >= 1, kOp, ": w.cols() (heads, ", H, ") must be >= 1");
  require_shape(kOp, "w", w, w.rows, H);
  require_device(kOp, "offsets", offsets.device, ctx);
  require_device(kOp, "w", w.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  // Absent x is a default-constructed view (cols 0); [0, H*D] is a present, empty x.
  const bool with_x = x.present() || x.cols > 0;
  const int64_t D = with_x ? x.cols / H : 1;
  if (with_x) {
    EW_REQUIRE(x.cols >= 1 && x.cols % H == 0, kOp, ": x.cols() (", x.cols,
               ") must be a positive multiple of w.cols() (heads, ", H, ")");
    require_device(kOp, "x", x.device, ctx);
  }
  require_shape(kOp, "out", out, R, H * D);
  // K, the edge count the offsets must end at: edge_ids' length when given, else w's
  // rows; indices (required with x) have K elements too. Empty views count as absent.
  if (indices.present()) require_device(kOp, "indices", indices.device, ctx);
  const int64_t K = edge_ids.present() ? edge_ids.size : (indices.present() ? indices.size : w.rows);
  if (edge_ids.present()) {
    require_device(kOp, "edge_ids", edge_ids.device, ctx);
  } else {
    EW_REQUIRE(w.rows == K, kOp, ": w.rows() (", w.rows, ") must equal the edge count (", K, ") without edge_ids");
  }
  if (with_x) {
    EW_REQUIRE(indices.size == K, kOp, ": indices.size() (", indices.size, ") must equal the edge count (", K,
               ") when x is given (indices name the rows of x)");
    EW_REQUIRE(indices.data != nullptr || K == 0, kOp, ": indices is null but has ", K, " elements");
  }
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, K, ctx);
    if (with_x) validate_index_range(kOp, "indices", indices, x.rows, "the rows of x", ctx);
    if (edge_ids.present()) validate_index_range(kOp, "edge_ids", edge_ids, w.rows, "the rows of w", ctx);
  }
  if (out.size() == 0) return;
  sddmm_detail::GatherSum<T, I> args{offsets.data, indices.data, edge_ids.data, w.data, H, with_x ? x.data : nullptr,
                                     D};
  if (ctx.device().is_cpu()) {
    sddmm_detail::edge_gather_sum_cpu(args, R, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    sddmm_detail::edge_gather_sum_cuda(args, R, out.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

#define EW_INSTANTIATE(T, I)                                                                                  \
  template void sddmm_dot<T, I>(VectorView<const int64_t>, VectorView<const I>, MatrixView<const T>,          \
                                MatrixView<const T>, MatrixView<T>, Context&);                                \
  template void sddmm_add<T, I>(VectorView<const int64_t>, VectorView<const I>, MatrixView<const T>,          \
                                MatrixView<const T>, MatrixView<T>, Context&);                                \
  template void edge_gather_sum<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const int64_t>, \
                                      MatrixView<const T>, MatrixView<const T>, MatrixView<T>, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise
