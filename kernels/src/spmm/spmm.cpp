// spmm and its backward helpers: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/spmm.hpp"

#include <algorithm>
#include <utility>

#include "common/cuda_backend.hpp"
#include "common/index_range.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "reduce_backward/reduce_backward_backends.hpp"
#include "spmm/spmm_backends.hpp"

namespace edgewise {

namespace {

using detail::require_device;
using spmm_detail::ArgGradRows;
using spmm_detail::GatherRows;
using spmm_detail::RowsOut;

const char* to_string(SpmmAlgorithm algorithm) {
  switch (algorithm) {
    case SpmmAlgorithm::Auto: return "Auto";
    case SpmmAlgorithm::Native: return "Native";
    case SpmmAlgorithm::CuSparse: return "CuSparse";
  }
  return "?";
}

using detail::validate_index_range;

void require_matrix(const char* op, const char* name, int64_t data_size, const void* data, int64_t rows,
                    int64_t cols) {
  EW_REQUIRE(rows >= 0 && cols >= 1, op, ": ", name, " must be [rows, C] with C >= 1 (got [", rows, ", ", cols,
             "])");
  EW_REQUIRE(data != nullptr || data_size == 0, op, ": ", name, " is null but has ", data_size, " elements");
}

template <class T>
void require_matrix(const char* op, const char* name, MatrixView<T> m) {
  require_matrix(op, name, m.size(), m.data, m.rows, m.cols);
}

// Runs a gather-reduce on ctx's device.
template <class Source, class T>
void dispatch_gather_reduce([[maybe_unused]] const char* op_name, const Source& source, const RowsOut<T>& dest, ReduceOp op,
                            Context& ctx) {
  if (dest.rows == 0) return;
  if (ctx.device().is_cpu()) {
    spmm_detail::gather_reduce_cpu(source, dest, op, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    spmm_detail::gather_reduce_cuda(source, dest, op, ctx);
#else
    detail::throw_built_without_cuda(op_name);
#endif
  }
}

}  // namespace

template <class T, class I>
void spmm(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
          MatrixView<const T> x, ReduceOp op, MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx,
          const SpmmOptions& options) {
  constexpr const char* kOp = "spmm";
  const int64_t E = indices.size;
  require_matrix(kOp, "x", x);
  EW_REQUIRE(offsets.size == out.rows + 1, kOp, ": offsets.size() (", offsets.size,
             ") must equal out.rows() + 1 (", out.rows + 1, ")");
  EW_REQUIRE(out.cols == x.cols, kOp, ": out.cols() (", out.cols, ") must equal x.cols() (", x.cols, ")");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, kOp, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(indices.data != nullptr || E == 0, kOp, ": indices is null but has ", E, " elements");
  require_device(kOp, "offsets", offsets.device, ctx);
  require_device(kOp, "indices", indices.device, ctx);
  require_device(kOp, "x", x.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  const bool indirect = options.weight_ids.present();
  if (weights.present()) {
    require_device(kOp, "weights", weights.device, ctx);
    if (indirect) {
      EW_REQUIRE(options.weight_ids.size == E, kOp, ": weight_ids.size() (", options.weight_ids.size,
                 ") must equal indices.size() (", E, "), one id per edge");
      require_device(kOp, "weight_ids", options.weight_ids.device, ctx);
    } else {
      EW_REQUIRE(weights.size == E, kOp, ": weights.size() (", weights.size, ") must equal indices.size() (", E,
                 "), one weight per edge");
    }
  } else {
    EW_REQUIRE(!indirect, kOp, ": weight_ids given without weights");
  }
  if (arg.present()) {
    EW_REQUIRE(has_arg(op), kOp, ": arg is only defined for min and max (op is ", to_string(op), ")");
    EW_REQUIRE(arg.rows == out.rows && arg.cols == out.cols, kOp, ": arg must be [", out.rows, ", ", out.cols,
               "] like out (got [", arg.rows, ", ", arg.cols, "])");
    require_device(kOp, "arg", arg.device, ctx);
  }
  const bool use_cusparse = options.algorithm == SpmmAlgorithm::CuSparse;
  if (use_cusparse) {
    EW_REQUIRE(op == ReduceOp::Sum, kOp, ": algorithm ", to_string(options.algorithm),
               " computes op sum only (op is ", to_string(op), ")");
    EW_REQUIRE(ctx.device().is_cuda(), kOp, ": algorithm ", to_string(options.algorithm),
               " needs a CUDA device (the context is on ", ctx.device().str(), ")");
  }
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
    validate_index_range(kOp, "indices", indices, x.rows, "the rows of x", ctx);
    if (weights.present() && indirect) {
      validate_index_range(kOp, "weight_ids", options.weight_ids, weights.size, "the elements of weights", ctx);
    }
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("out", out), named("arg", arg)},
                                     {named("x", x), named("offsets", offsets), named("indices", indices),
                                      named("weights", weights), named("weight_ids", options.weight_ids)});
  }
  if (out.size() == 0) return;

  GatherRows<T, I> source{indices.data, x.data, x.cols, {weights.data, options.weight_ids.data, nullptr}};
  RowsOut<T> dest{offsets.data, out.rows, out.cols, E, out.data, arg.data};
  if (use_cusparse) {
#if EDGEWISE_WITH_CUDA
    spmm_detail::spmm_cusparse(source, dest, x.rows, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
    return;
  }
  dispatch_gather_reduce(kOp, source, dest, op, ctx);
}

bool spmm_has_backward(ReduceOp op) noexcept {
  const BackwardRule rule = backward_rule(op);
  return rule == BackwardRule::Sum || rule == BackwardRule::Mean || rule == BackwardRule::Arg;
}

template <class T, class I>
void spmm(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
          MatrixView<const T> x, ReduceOp op, MatrixView<T> out, MatrixView<int64_t> arg) {
  spmm<T, I>(offsets, indices, weights, x, op, out, arg, default_context(x.device));
}

// Shape and device checks shared by the two dL/dx helpers; returns E.
template <class T, class I>
int64_t check_transposed(const char* op, VectorView<const int64_t> t_offsets, VectorView<const I> t_indices,
                         VectorView<const int64_t> t_edge_ids, VectorView<const T> weights,
                         MatrixView<const T> grad_out, MatrixView<T> grad_x, Context& ctx) {
  const int64_t E = t_indices.size;
  require_matrix(op, "grad_out", grad_out);
  require_matrix(op, "grad_x", grad_x);
  EW_REQUIRE(t_offsets.size == grad_x.rows + 1, op, ": t_offsets.size() (", t_offsets.size,
             ") must equal grad_x.rows() + 1 (", grad_x.rows + 1, ")");
  EW_REQUIRE(grad_x.cols == grad_out.cols, op, ": grad_x.cols() (", grad_x.cols, ") must equal grad_out.cols() (",
             grad_out.cols, ")");
  EW_REQUIRE(t_indices.data != nullptr || E == 0, op, ": t_indices is null but has ", E, " elements");
  require_device(op, "t_offsets", t_offsets.device, ctx);
  require_device(op, "t_indices", t_indices.device, ctx);
  require_device(op, "grad_out", grad_out.device, ctx);
  require_device(op, "grad_x", grad_x.device, ctx);
  if (t_edge_ids.present()) {
    EW_REQUIRE(t_edge_ids.size == E, op, ": t_edge_ids.size() (", t_edge_ids.size, ") must equal t_indices.size() (",
               E, "), one id per edge");
    require_device(op, "t_edge_ids", t_edge_ids.device, ctx);
  }
  if (weights.present()) {
    EW_REQUIRE(weights.size == E, op, ": weights.size() (", weights.size, ") must equal t_indices.size() (", E,
               "), one weight per edge");
    require_device(op, "weights", weights.device, ctx);
  }
  if (ctx.validate) {
    detail::validate_offsets(op, "t_offsets", t_offsets, E, ctx);
    validate_index_range(op, "t_indices", t_indices, grad_out.rows, "the rows of grad_out", ctx);
    if (t_edge_ids.present()) validate_index_range(op, "t_edge_ids", t_edge_ids, E, "the edges", ctx);
    using detail::named;
    detail::require_outputs_disjoint(op, {named("grad_x", grad_x)},
                                     {named("grad_out", grad_out), named("t_offsets", t_offsets),
                                      named("t_indices", t_indices), named("t_edge_ids", t_edge_ids),
                                      named("weights", weights)});
  }
  return E;
}

template <class T, class I>
void spmm_backward(VectorView<const int64_t> t_offsets, VectorView<const I> t_indices,
                   VectorView<const int64_t> t_edge_ids, VectorView<const T> weights,
                   MatrixView<const T> grad_out, ReduceOp op, VectorView<const int64_t> offsets,
                   MatrixView<T> grad_x, Context& ctx) {
  constexpr const char* kOp = "spmm_backward";
  const BackwardRule rule = backward_rule(op);
  EW_REQUIRE(rule != BackwardRule::Arg, kOp, ": op must be sum or mean (got ", to_string(op),
             ", whose gradient is routed through the forward's arg: use spmm_arg_backward)");
  EW_REQUIRE(rule == BackwardRule::Sum || rule == BackwardRule::Mean, kOp, ": op must be sum or mean (got ",
             to_string(op), ", whose gradient needs the forward's output: use spmm_full_backward)");
  const bool mean = rule == BackwardRule::Mean;
  if (mean) {
    EW_REQUIRE(offsets.size == grad_out.rows + 1, kOp, ": offsets.size() (", offsets.size,
               ") must equal grad_out.rows() + 1 (", grad_out.rows + 1, ") for mean (the forward offsets give deg)");
    require_device(kOp, "offsets", offsets.device, ctx);
  }
  const int64_t E = check_transposed(kOp, t_offsets, t_indices, t_edge_ids, weights, grad_out, grad_x, ctx);
  if (mean && ctx.validate) detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
  if (grad_x.size() == 0) return;

  // The transposed spmm: gather grad_out rows of each source's destinations.
  GatherRows<T, I> source{t_indices.data, grad_out.data, grad_out.cols,
                          {weights.data, weights.present() ? t_edge_ids.data : nullptr, mean ? offsets.data : nullptr}};
  RowsOut<T> dest{t_offsets.data, grad_x.rows, grad_x.cols, t_indices.size, grad_x.data, nullptr};
  dispatch_gather_reduce(kOp, source, dest, ReduceOp::Sum, ctx);
}

template <class T, class I>
void spmm_arg_backward(VectorView<const int64_t> t_offsets, VectorView<const I> t_indices,
                       VectorView<const int64_t> t_edge_ids, VectorView<const T> weights,
                       MatrixView<const T> grad_out, MatrixView<const int64_t> arg, MatrixView<T> grad_x,
                       Context& ctx) {
  constexpr const char* kOp = "spmm_arg_backward";
  EW_REQUIRE(t_edge_ids.present() || t_indices.size == 0, kOp,
             ": t_edge_ids is required (the forward edge position each transposed edge is matched against arg)");
  EW_REQUIRE(arg.rows == grad_out.rows && arg.cols == grad_out.cols, kOp, ": arg must be [", grad_out.rows, ", ",
             grad_out.cols, "] like grad_out (got [", arg.rows, ", ", arg.cols, "])");
  EW_REQUIRE(arg.data != nullptr || arg.size() == 0, kOp, ": arg is null but has ", arg.size(), " elements");
  require_device(kOp, "arg", arg.device, ctx);
  check_transposed(kOp, t_offsets, t_indices, t_edge_ids, weights, grad_out, grad_x, ctx);
  if (grad_x.size() == 0) return;

  ArgGradRows<T, I> source{t_indices.data, t_edge_ids.data, grad_out.data, arg.data, grad_out.cols, weights.data};
  RowsOut<T> dest{t_offsets.data, grad_x.rows, grad_x.cols, t_indices.size, grad_x.data, nullptr};
  dispatch_gather_reduce(kOp, source, dest, ReduceOp::Sum, ctx);
}

template <class T, class I>
void spmm_weight_backward(VectorView<const int64_t> offsets, VectorView<const I> indices, MatrixView<const T> x,
                          MatrixView<const T> grad_out, ReduceOp op, MatrixView<const int64_t> arg,
                          VectorView<T> grad_w, Context& ctx) {
  constexpr const char* kOp = "spmm_weight_backward";
  const int64_t E = indices.size;
  require_matrix(kOp, "x", x);
  require_matrix(kOp, "grad_out", grad_out);
  EW_REQUIRE(offsets.size == grad_out.rows + 1, kOp, ": offsets.size() (", offsets.size,
             ") must equal grad_out.rows() + 1 (", grad_out.rows + 1, ")");
  EW_REQUIRE(grad_out.cols == x.cols, kOp, ": grad_out.cols() (", grad_out.cols, ") must equal x.cols() (", x.cols,
             ")");
  EW_REQUIRE(grad_w.size == E, kOp, ": grad_w.size() (", grad_w.size, ") must equal indices.size() (", E,
             "), one gradient per edge");
  EW_REQUIRE(grad_w.data != nullptr || E == 0, kOp, ": grad_w is null but has ", E, " elements");
  EW_REQUIRE(indices.data != nullptr || E == 0, kOp, ": indices is null but has ", E, " elements");
  require_device(kOp, "offsets", offsets.device, ctx);
  require_device(kOp, "indices", indices.device, ctx);
  require_device(kOp, "x", x.device, ctx);
  require_device(kOp, "grad_out", grad_out.device, ctx);
  require_device(kOp, "grad_w", grad_w.device, ctx);
  const BackwardRule rule = backward_rule(op);
  EW_REQUIRE(rule == BackwardRule::Sum || rule == BackwardRule::Mean || rule == BackwardRule::Arg, kOp, ": op ",
             to_string(op), " has no spmm weight backward (its gradient needs the forward's output: use spmm_full_backward)");
  if (rule == BackwardRule::Arg) {
    EW_REQUIRE(arg.present() || grad_out.size() == 0, kOp, ": arg is required for ", to_string(op),
               " (the forward's winners)");
    EW_REQUIRE(arg.rows == grad_out.rows && arg.cols == grad_out.cols, kOp, ": arg must be [", grad_out.rows, ", ",
               grad_out.cols, "] like grad_out (got [", arg.rows, ", ", arg.cols, "])");
    require_device(kOp, "arg", arg.device, ctx);
  } else {
    EW_REQUIRE(!arg.present(), kOp, ": arg is only defined for min and max (op is ", to_string(op), ")");
  }
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
    validate_index_range(kOp, "indices", indices, x.rows, "the rows of x", ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("grad_w", grad_w)},
                                     {named("x", x), named("grad_out", grad_out), named("offsets", offsets),
                                      named("indices", indices), named("arg", arg)});
  }
  if (E == 0) return;
  if (ctx.device().is_cpu()) {
    spmm_detail::weight_backward_cpu(offsets.data, grad_out.rows, E, indices.data, x.data, grad_out.data, arg.data,
                                     x.cols, op, grad_w.data);
  } else {
#if EDGEWISE_WITH_CUDA
    spmm_detail::weight_backward_cuda(offsets.data, grad_out.rows, E, indices.data, x.data, grad_out.data, arg.data,
                                      x.cols, op, grad_w.data, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T, class I>
void spmm_full_backward(VectorView<const int64_t> offsets, VectorView<const I> indices, VectorView<const T> weights,
                        MatrixView<const T> x, ReduceOp op, MatrixView<const T> out, MatrixView<const int64_t> arg,
                        MatrixView<const T> grad_out, VectorView<const int64_t> t_offsets,
                        VectorView<const int64_t> t_edge_ids, MatrixView<T> grad_x, VectorView<T> grad_w,
                        Context& ctx, TieRule tie_rule) {
  constexpr const char* kOp = "spmm_full_backward";
  const bool split = has_arg(op) && tie_rule != TieRule::First;
  const int64_t E = indices.size, S = grad_out.rows, C = x.cols;
  require_matrix(kOp, "x", x);
  require_matrix(kOp, "grad_out", grad_out);
  require_matrix(kOp, "grad_x", grad_x);
  EW_REQUIRE(offsets.size == S + 1, kOp, ": offsets.size() (", offsets.size, ") must equal grad_out.rows() + 1 (",
             S + 1, ")");
  EW_REQUIRE(grad_out.cols == C && grad_x.cols == C, kOp, ": grad_out.cols() (", grad_out.cols,
             ") and grad_x.cols() (", grad_x.cols, ") must equal x.cols() (", C, ")");
  EW_REQUIRE(grad_x.rows == x.rows, kOp, ": grad_x.rows() (", grad_x.rows, ") must equal x.rows() (", x.rows, ")");
  EW_REQUIRE(out.rows == S && out.cols == C && (out.data != nullptr || out.size() == 0), kOp, ": out must be [", S,
             ", ", C, "] like grad_out (got [", out.rows, ", ", out.cols, "])");
  EW_REQUIRE(indices.data != nullptr || E == 0, kOp, ": indices is null but has ", E, " elements");
  EW_REQUIRE(t_offsets.size == x.rows + 1, kOp, ": t_offsets.size() (", t_offsets.size, ") must equal x.rows() + 1 (",
             x.rows + 1, ")");
  EW_REQUIRE(t_edge_ids.size == E && (t_edge_ids.data != nullptr || E == 0), kOp, ": t_edge_ids.size() (",
             t_edge_ids.size, ") must equal indices.size() (", E, "), one forward position per transposed edge");
  EW_REQUIRE(!weights.present() || weights.size == E, kOp, ": weights.size() (", weights.size,
             ") must equal indices.size() (", E, "), one weight per edge");
  EW_REQUIRE(!grad_w.present() || grad_w.size == E, kOp, ": grad_w.size() (", grad_w.size,
             ") must equal indices.size() (", E, "), one gradient per edge");
  if (has_arg(op) && !split) {
    EW_REQUIRE(arg.rows == S && arg.cols == C && (arg.data != nullptr || arg.size() == 0), kOp,
               ": arg [", S, ", ", C, "] is required for ", to_string(op),
               " (the forward's winners; the split rules need none)");
    require_device(kOp, "arg", arg.device, ctx);
  }
  for (auto [name, device] : {std::pair{"offsets", offsets.device}, std::pair{"indices", indices.device},
                              std::pair{"x", x.device}, std::pair{"out", out.device},
                              std::pair{"grad_out", grad_out.device}, std::pair{"t_offsets", t_offsets.device},
                              std::pair{"t_edge_ids", t_edge_ids.device}, std::pair{"grad_x", grad_x.device}}) {
    require_device(kOp, name, device, ctx);
  }
  if (weights.present()) require_device(kOp, "weights", weights.device, ctx);
  if (grad_w.present()) require_device(kOp, "grad_w", grad_w.device, ctx);
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, E, ctx);
    detail::validate_offsets(kOp, "t_offsets", t_offsets, E, ctx);
    validate_index_range(kOp, "indices", indices, x.rows, "the rows of x", ctx);
    validate_index_range(kOp, "t_edge_ids", t_edge_ids, E, "the edges", ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("grad_x", grad_x), named("grad_w", grad_w)},
                                     {named("x", x), named("out", out), named("grad_out", grad_out),
                                      named("offsets", offsets), named("indices", indices),
                                      named("weights", weights), named("t_offsets", t_offsets),
                                      named("t_edge_ids", t_edge_ids), named("arg", arg)});
  }
  if (grad_x.size() == 0 && !grad_w.present()) return;

  // g_e for every message, then the transposed gather of w_e g_e.
  Buffer<T> grad_messages(E * C, ctx.device());
  reduce_backward_detail::CsrGrad<GatherRows<T, I>, T> g;
  g.source = GatherRows<T, I>{indices.data, x.data, C, {weights.data, nullptr, nullptr}};
  g.scaled = weights.present();
  g.offsets = offsets.data;
  g.rows = S;
  g.cols = C;
  g.edges = E;
  g.out = out.data;
  g.arg = has_arg(op) && !split ? arg.data : nullptr;
  g.tie_rule = split ? tie_rule : TieRule::First;
  g.grad_out = grad_out.data;
  g.grad = grad_messages.data();
  g.grad_w = grad_w.present() ? grad_w.data : nullptr;
  if (E > 0 && S > 0) {
    if (ctx.device().is_cpu()) {
      reduce_backward_detail::spmm_grad_cpu(g, op);
    } else {
#if EDGEWISE_WITH_CUDA
      reduce_backward_detail::spmm_grad_cuda(g, op, ctx);
#else
      detail::throw_built_without_cuda(kOp);
#endif
    }
  }
  if (grad_x.size() == 0) return;
  GatherRows<T, int64_t> source{t_edge_ids.data, grad_messages.data(), C,
                                {weights.data, weights.present() ? t_edge_ids.data : nullptr, nullptr}};
  RowsOut<T> dest{t_offsets.data, grad_x.rows, C, E, grad_x.data, nullptr};
  dispatch_gather_reduce(kOp, source, dest, ReduceOp::Sum, ctx);
}

#define EW_INSTANTIATE(T, I)                                                                                    \
  template void spmm<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const T>, MatrixView<const T>, \
                           ReduceOp, MatrixView<T>, MatrixView<int64_t>, Context&, const SpmmOptions&);         \
  template void spmm<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const T>, MatrixView<const T>, \
                           ReduceOp, MatrixView<T>, MatrixView<int64_t>);                                       \
  template void spmm_backward<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const int64_t>,   \
                                    VectorView<const T>, MatrixView<const T>, ReduceOp, VectorView<const int64_t>, \
                                    MatrixView<T>, Context&);                                                   \
  template void spmm_arg_backward<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const int64_t>, \
                                        VectorView<const T>, MatrixView<const T>, MatrixView<const int64_t>,    \
                                        MatrixView<T>, Context&);                                               \
  template void spmm_weight_backward<T, I>(VectorView<const int64_t>, VectorView<const I>, MatrixView<const T>,  \
                                           MatrixView<const T>, ReduceOp, MatrixView<const int64_t>, VectorView<T>, \
                                           Context&);                                                           \
  template void spmm_full_backward<T, I>(VectorView<const int64_t>, VectorView<const I>, VectorView<const T>,     \
                                         MatrixView<const T>, ReduceOp, MatrixView<const T>,                      \
                                         MatrixView<const int64_t>, MatrixView<const T>, VectorView<const int64_t>, \
                                         VectorView<const int64_t>, MatrixView<T>, VectorView<T>, Context&, TieRule);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise
