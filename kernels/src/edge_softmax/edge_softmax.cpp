// edge_softmax and its backward: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/edge_softmax.hpp"

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edge_softmax/edge_softmax_backends.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise {

namespace {

using detail::require_device;

template <class T>
void require_edges_by_heads(const char* op, const char* name, MatrixView<T> m, int64_t edges, int64_t heads) {
  EW_REQUIRE(m.rows == edges && m.cols == heads, op, ": ", name, " must be [", edges, ", ", heads, "] (got [", m.rows,
             ", ", m.cols, "])");
  EW_REQUIRE(m.data != nullptr || m.size() == 0, op, ": ", name, " is null but has ", m.size(), " elements");
}

// offsets [S+1] over E = reference.rows() edges, H = reference.cols() >= 1 heads.
template <class T>
void validate_segments(const char* op, const char* name, VectorView<const int64_t> offsets, MatrixView<T> reference,
                       Context& ctx) {
  EW_REQUIRE(offsets.size >= 1, op, ": offsets must have S + 1 >= 1 elements (got 0)");
  EW_REQUIRE(reference.cols >= 1, op, ": ", name, ".cols() (heads, ", reference.cols, ") must be >= 1");
  require_device(op, "offsets", offsets.device, ctx);
  require_device(op, name, reference.device, ctx);
}

}  // namespace

template <class T>
void edge_softmax(VectorView<const int64_t> offsets, MatrixView<const T> scores, MatrixView<T> out, Context& ctx) {
  constexpr const char* kOp = "edge_softmax";
  validate_segments(kOp, "scores", offsets, scores, ctx);
  const int64_t E = scores.rows, H = scores.cols;
  require_edges_by_heads(kOp, "scores", scores, E, H);
  require_edges_by_heads(kOp, "out", out, E, H);
  require_device(kOp, "out", out.device, ctx);
  detail::require_disjoint(kOp, "scores", scores.data, static_cast<size_t>(scores.size()) * sizeof(T), "out", out.data,
                           static_cast<size_t>(out.size()) * sizeof(T));
  if (ctx.validate) detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
  if (E == 0) return;
  const int64_t S = offsets.size - 1;
  if (ctx.device().is_cpu()) {
    edge_softmax_detail::edge_softmax_cpu(offsets.data, S, H, scores.data, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    edge_softmax_detail::edge_softmax_cuda(offsets.data, S, H, scores.data, out.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T>
void edge_softmax_backward(VectorView<const int64_t> offsets, MatrixView<const T> out, MatrixView<const T> grad_out,
                           MatrixView<T> grad_scores, Context& ctx) {
  constexpr const char* kOp = "edge_softmax_backward";
  validate_segments(kOp, "out", offsets, out, ctx);
  const int64_t E = out.rows, H = out.cols;
  require_edges_by_heads(kOp, "out", out, E, H);
  require_edges_by_heads(kOp, "grad_out", grad_out, E, H);
  require_edges_by_heads(kOp, "grad_scores", grad_scores, E, H);
  require_device(kOp, "grad_out", grad_out.device, ctx);
  require_device(kOp, "grad_scores", grad_scores.device, ctx);
  detail::require_disjoint(kOp, "out", out.data, static_cast<size_t>(out.size()) * sizeof(T), "grad_scores",
                           grad_scores.data, static_cast<size_t>(grad_scores.size()) * sizeof(T));
  if (ctx.validate) detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
  if (E == 0) return;
  const int64_t S = offsets.size - 1;
  if (ctx.device().is_cpu()) {
    edge_softmax_detail::edge_softmax_backward_cpu(offsets.data, S, H, out.data, grad_out.data, grad_scores.data);
  } else {
#if EDGEWISE_WITH_CUDA
    edge_softmax_detail::edge_softmax_backward_cuda(offsets.data, S, H, out.data, grad_out.data, grad_scores.data,
                                                    ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

#define EW_INSTANTIATE(T)                                                                                     \
  template void edge_softmax<T>(VectorView<const int64_t>, MatrixView<const T>, MatrixView<T>, Context&);    \
  template void edge_softmax_backward<T>(VectorView<const int64_t>, MatrixView<const T>, MatrixView<const T>, \
                                         MatrixView<T>, Context&);
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
#undef EW_INSTANTIATE

}  // namespace edgewise
