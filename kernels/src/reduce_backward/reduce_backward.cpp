// segment_reduce_backward and scatter_reduce_backward: validation, then dispatch.
#include "edgewise/kernels/reduce_backward.hpp"

#include "common/cuda_backend.hpp"
#include "common/index_range.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "reduce_backward/reduce_backward_backends.hpp"

namespace edgewise {

namespace {

using detail::require_device;

// The checks both share: shapes of the forward's outputs, arg, devices.
template <class T>
void check_common(const char* kOp, MatrixView<const T> values, ReduceOp op, MatrixView<const T> out,
                  MatrixView<const int64_t> arg, MatrixView<const T> grad_out, MatrixView<T> grad_values,
                  TieRule tie_rule, Context& ctx) {
  EW_REQUIRE(values.rows >= 0 && values.cols >= 1, kOp, ": values must be [M, C] with C >= 1 (got [", values.rows,
             ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, kOp, ": values is null but has ", values.size(),
             " elements");
  EW_REQUIRE(grad_values.rows == values.rows && grad_values.cols == values.cols &&
                 (grad_values.data != nullptr || grad_values.size() == 0),
             kOp, ": grad_values must be [", values.rows, ", ", values.cols, "] like values (got [", grad_values.rows,
             ", ", grad_values.cols, "])");
  EW_REQUIRE(grad_out.cols == values.cols && (grad_out.data != nullptr || grad_out.size() == 0), kOp,
             ": grad_out.cols() (", grad_out.cols, ") must equal values.cols() (", values.cols, ")");
  EW_REQUIRE(out.rows == grad_out.rows && out.cols == grad_out.cols && (out.data != nullptr || out.size() == 0), kOp,
             ": out must be [", grad_out.rows, ", ", grad_out.cols, "] like grad_out (got [", out.rows, ", ", out.cols,
             "])");
  require_device(kOp, "values", values.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  require_device(kOp, "grad_out", grad_out.device, ctx);
  require_device(kOp, "grad_values", grad_values.device, ctx);
  if (has_arg(op) && tie_rule == TieRule::First) {
    EW_REQUIRE(arg.rows == grad_out.rows && arg.cols == grad_out.cols && (arg.data != nullptr || arg.size() == 0),
               kOp, ": arg [", grad_out.rows, ", ", grad_out.cols, "] is required for ", to_string(op),
               " (the forward's winners; got [", arg.rows, ", ", arg.cols, "]; the split rules need none)");
    require_device(kOp, "arg", arg.device, ctx);
  }
}

}  // namespace

template <class T>
void segment_reduce_backward(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                             MatrixView<const T> out, MatrixView<const int64_t> arg, MatrixView<const T> grad_out,
                             MatrixView<T> grad_values, Context& ctx, TieRule tie_rule) {
  constexpr const char* kOp = "segment_reduce_backward";
  check_common(kOp, values, op, out, arg, grad_out, grad_values, tie_rule, ctx);
  const bool split = has_arg(op) && tie_rule != TieRule::First;
  EW_REQUIRE(offsets.size == grad_out.rows + 1, kOp, ": offsets.size() (", offsets.size,
             ") must equal grad_out.rows() + 1 (", grad_out.rows + 1, ")");
  require_device(kOp, "offsets", offsets.device, ctx);
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, values.rows, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("grad_values", grad_values)},
                                     {named("values", values), named("offsets", offsets), named("out", out),
                                      named("grad_out", grad_out), named("arg", arg)});
  }
  if (grad_values.size() == 0) return;
  reduce_backward_detail::CsrGrad<gather_reduce_detail::ContiguousRows<T>, T> g;
  g.source = {values.data, values.cols};
  g.offsets = offsets.data;
  g.rows = grad_out.rows;
  g.cols = values.cols;
  g.edges = values.rows;
  g.out = out.data;
  g.arg = has_arg(op) && !split ? arg.data : nullptr;
  g.tie_rule = split ? tie_rule : TieRule::First;
  g.grad_out = grad_out.data;
  g.grad = grad_values.data;
  if (ctx.device().is_cpu()) {
    reduce_backward_detail::segment_grad_cpu(g, op);
  } else {
#if EDGEWISE_WITH_CUDA
    reduce_backward_detail::segment_grad_cuda(g, op, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T, class I>
void scatter_reduce_backward(MatrixView<const T> values, VectorView<const I> index, ReduceOp op,
                             MatrixView<const T> out, MatrixView<const int64_t> arg, MatrixView<const T> grad_out,
                             MatrixView<T> grad_values, Context& ctx, TieRule tie_rule) {
  constexpr const char* kOp = "scatter_reduce_backward";
  check_common(kOp, values, op, out, arg, grad_out, grad_values, tie_rule, ctx);
  const bool split = has_arg(op) && tie_rule != TieRule::First;
  EW_REQUIRE(index.size == values.rows && (index.data != nullptr || index.size == 0), kOp, ": index.size() (",
             index.size, ") must equal values.rows() (", values.rows, ")");
  require_device(kOp, "index", index.device, ctx);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(kOp, "index", index, grad_out.rows, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("grad_values", grad_values)},
                                     {named("values", values), named("index", index), named("out", out),
                                      named("grad_out", grad_out), named("arg", arg)});
  }
  if (grad_values.size() == 0) return;
  const MatrixView<const int64_t> arg_used = has_arg(op) && !split ? arg : MatrixView<const int64_t>();
  if (ctx.device().is_cpu()) {
    reduce_backward_detail::scatter_grad_cpu(values.data, index.data, values.rows, grad_out.rows, values.cols, op,
                                             out.data, arg_used.data, split ? tie_rule : TieRule::First, grad_out.data, grad_values.data);
  } else {
#if EDGEWISE_WITH_CUDA
    reduce_backward_detail::scatter_grad_cuda(values.data, index.data, values.rows, grad_out.rows, values.cols, op,
                                              out.data, arg_used.data, split ? tie_rule : TieRule::First, grad_out.data, grad_values.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

#define EW_INSTANTIATE(T)                                                                                        \
  template void segment_reduce_backward<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp,             \
                                           MatrixView<const T>, MatrixView<const int64_t>, MatrixView<const T>,  \
                                           MatrixView<T>, Context&, TieRule);                                   \
  template void scatter_reduce_backward<T, int32_t>(MatrixView<const T>, VectorView<const int32_t>, ReduceOp,    \
                                                    MatrixView<const T>, MatrixView<const int64_t>,              \
                                                    MatrixView<const T>, MatrixView<T>, Context&, TieRule);      \
  template void scatter_reduce_backward<T, int64_t>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp,    \
                                                    MatrixView<const T>, MatrixView<const int64_t>,              \
                                                    MatrixView<const T>, MatrixView<T>, Context&, TieRule);
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
#undef EW_INSTANTIATE

}  // namespace edgewise
