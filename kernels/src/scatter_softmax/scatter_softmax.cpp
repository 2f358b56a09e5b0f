// scatter_softmax: validation, then the three passes (group max, exponentials and their
// group sums, normalisation); the group reductions are scatter_reduce's.
#include "edgewise/kernels/scatter_softmax.hpp"

#include "common/cuda_backend.hpp"
#include "common/index_range.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "scatter_softmax/scatter_softmax_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "scatter_softmax";

// values [M, C] (transposed: values_t [C, M]); out like values, or with per_group
// [S, C] (transposed: [C, S]).
template <class T, class I>
void check_arguments(MatrixView<const T> values, VectorView<const I> index, int64_t S, double eps, MatrixView<T> out,
                     bool transposed, bool per_group, Context& ctx) {
  using detail::require_device;
  const char* name = transposed ? "values_t" : "values";
  const int64_t M = transposed ? values.cols : values.rows, C = transposed ? values.rows : values.cols;
  EW_REQUIRE(M >= 0 && C >= 1, kOp, ": ", name, " must be ", transposed ? "[C, M]" : "[M, C]",
             " with C >= 1 (got [", values.rows, ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, kOp, ": ", name, " is null but has ", values.size(),
             " elements");
  EW_REQUIRE(index.size == M, kOp, ": index.size() (", index.size, ") must equal ", name,
             transposed ? ".cols() (" : ".rows() (", M, ")");
  EW_REQUIRE(index.data != nullptr || index.size == 0, kOp, ": index is null but has ", index.size, " elements");
  EW_REQUIRE(S >= 0, kOp, ": the number of groups S (", S, ") must be >= 0");
  if (per_group) {
    const int64_t rows = transposed ? C : S, cols = transposed ? S : C;
    EW_REQUIRE(out.rows == rows && out.cols == cols, kOp, ": out must be [", rows, ", ", cols, "] (", transposed ? "C, S" : "S, C",
               "; got [", out.rows, ", ", out.cols, "])");
  } else {
    EW_REQUIRE(out.rows == values.rows && out.cols == values.cols, kOp, ": out must be [", values.rows, ", ",
               values.cols, "] like ", name, " (got [", out.rows, ", ", out.cols, "])");
  }
  EW_REQUIRE(out.data != nullptr || out.size() == 0, kOp, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(eps >= 0, kOp, ": eps (", eps, ") must be >= 0");
  require_device(kOp, name, values.device, ctx);
  require_device(kOp, "index", index.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(kOp, "index", index, S, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("out", out)}, {named(name, values), named("index", index)});
  }
}

// Runs f with ctx's validation off (the index was checked once, up front), restoring it.
template <class F>
void unvalidated(Context& ctx, F&& f) {
  const bool saved = ctx.validate;
  ctx.validate = false;
  try {
    f();
  } catch (...) {
    ctx.validate = saved;
    throw;
  }
  ctx.validate = saved;
}

// The passes on either layout (arguments checked by the caller). Softmax / LogSoftmax
// write out like values; logsumexp (out [S, C], transposed [C, S]) writes the
// exponentials to a temporary instead and finalises per group.
template <class T, class I>
void run(MatrixView<const T> values, VectorView<const I> index, int64_t S, SoftmaxKind kind, bool logsumexp,
         double eps, MatrixView<T> out, bool transposed, Context& ctx) {
  const int64_t M = transposed ? values.cols : values.rows, C = transposed ? values.rows : values.cols;
  const Device device = ctx.device();
#if !EDGEWISE_WITH_CUDA
  if (!device.is_cpu()) detail::throw_built_without_cuda(kOp);
#endif
  if (M == 0) {  // softmax: nothing to write; logsumexp: every group is empty (0)
    if (logsumexp) fill_bytes(out.data, device, 0, static_cast<std::size_t>(out.size()) * sizeof(T), ctx.stream());
    return;
  }
  if (device.is_cpu() && !transposed && scatter_softmax_detail::grouped_softmax_pays(M, C, S, sizeof(T))) {
    scatter_softmax_detail::grouped_softmax_cpu(values.data, index.data, M, C, S, kind, logsumexp, eps, out.data);
    return;
  }
  // Per group and column: [S, C], or [C, S] beside transposed values.
  const int64_t group_rows = transposed ? C : S, group_cols = transposed ? S : C;
  Buffer<T> group_max(S * C, device), group_sum(S * C, device), scratch(logsumexp ? M * C : 0, device);
  T* exps = logsumexp ? scratch.data() : out.data;
  const MatrixView<T> max_view(group_max.data(), group_rows, group_cols, device);
  const MatrixView<T> sum_view(group_sum.data(), group_rows, group_cols, device);
  const auto reduce = [&](MatrixView<const T> v, ReduceOp op, MatrixView<T> into) {
    unvalidated(ctx, [&] {
      if (transposed) {
        scatter_reduce_transposed<T, I>(v, index, op, into, {}, ctx);
      } else {
        scatter_reduce<T, I>(v, index, op, into, {}, ctx);
      }
    });
  };
  reduce(values, ReduceOp::Max, max_view);
  if (device.is_cpu()) {
    scatter_softmax_detail::exponentials_cpu(values.data, index.data, M, C, S, transposed, logsumexp,
                                             group_max.data(), exps);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_softmax_detail::exponentials_cuda(values.data, index.data, M, C, S, transposed, logsumexp,
                                              group_max.data(), exps, ctx);
#endif
  }
  reduce(MatrixView<const T>(exps, values.rows, values.cols, device), ReduceOp::Sum, sum_view);
  if (logsumexp) {
    if (device.is_cpu()) {
      scatter_softmax_detail::logsumexp_finalise_cpu(group_max.data(), group_sum.data(), S * C, eps, out.data);
    } else {
#if EDGEWISE_WITH_CUDA
      scatter_softmax_detail::logsumexp_finalise_cuda(group_max.data(), group_sum.data(), S * C, eps, out.data, ctx);
#endif
    }
    return;
  }
  if (device.is_cpu()) {
    scatter_softmax_detail::normalise_cpu(values.data, index.data, M, C, S, transposed, group_max.data(),
                                          group_sum.data(), kind, eps, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_softmax_detail::normalise_cuda(values.data, index.data, M, C, S, transposed, group_max.data(),
                                           group_sum.data(), kind, eps, out.data, ctx);
#endif
  }
}

}  // namespace

template <class T, class I>
void scatter_softmax(MatrixView<const T> values, VectorView<const I> index, int64_t S, SoftmaxKind kind, double eps,
                     MatrixView<T> out, Context& ctx) {
  check_arguments(values, index, S, eps, out, false, false, ctx);
  run(values, index, S, kind, false, eps, out, false, ctx);
}

template <class T, class I>
void scatter_softmax_transposed(MatrixView<const T> values_t, VectorView<const I> index, int64_t S, SoftmaxKind kind,
                                double eps, MatrixView<T> out_t, Context& ctx) {
  check_arguments(values_t, index, S, eps, out_t, true, false, ctx);
  run(values_t, index, S, kind, false, eps, out_t, true, ctx);
}

template <class T, class I>
void scatter_logsumexp(MatrixView<const T> values, VectorView<const I> index, int64_t S, double eps,
                       MatrixView<T> out, bool transposed, Context& ctx) {
  check_arguments(values, index, S, eps, out, transposed, true, ctx);
  run(values, index, S, SoftmaxKind::Softmax, true, eps, out, transposed, ctx);
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                            \
  template void scatter_softmax<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, SoftmaxKind, double, \
                                      MatrixView<T>, Context&);                                               \
  template void scatter_softmax_transposed<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, SoftmaxKind, \
                                                 double, MatrixView<T>, Context&);                                \
  template void scatter_logsumexp<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, double, MatrixView<T>,  \
                                        bool, Context&);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise
