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

template <class T, class I>
void check_arguments(MatrixView<const T> values, VectorView<const I> index, int64_t S, double eps, MatrixView<T> out,
                     Context& ctx) {
  using detail::require_device;
  EW_REQUIRE(values.rows >= 0 && values.cols >= 1, kOp, ": values must be [M, C] with C >= 1 (got [", values.rows,
             ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, kOp, ": values is null but has ", values.size(),
             " elements");
  EW_REQUIRE(index.size == values.rows, kOp, ": index.size() (", index.size, ") must equal values.rows() (",
             values.rows, ")");
  EW_REQUIRE(index.data != nullptr || index.size == 0, kOp, ": index is null but has ", index.size, " elements");
  EW_REQUIRE(S >= 0, kOp, ": the number of groups S (", S, ") must be >= 0");
  EW_REQUIRE(out.rows == values.rows && out.cols == values.cols, kOp, ": out must be [", values.rows, ", ",
             values.cols, "] like values (got [", out.rows, ", ", out.cols, "])");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, kOp, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(eps >= 0, kOp, ": eps (", eps, ") must be >= 0");
  require_device(kOp, "values", values.device, ctx);
  require_device(kOp, "index", index.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(kOp, "index", index, S, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("out", out)}, {named("values", values), named("index", index)});
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
}  // namespace

template <class T, class I>
void scatter_softmax(MatrixView<const T> values, VectorView<const I> index, int64_t S, SoftmaxKind kind, double eps,
                     MatrixView<T> out, Context& ctx) {
  check_arguments(values, index, S, eps, out, ctx);
  const int64_t M = values.rows, C = values.cols;
  if (M == 0) return;
  const Device device = ctx.device();
#if !EDGEWISE_WITH_CUDA
  if (!device.is_cpu()) detail::throw_built_without_cuda(kOp);
#endif
  Buffer<T> group_max(S * C, device), group_sum(S * C, device);
  const MatrixView<T> max_view(group_max.data(), S, C, device), sum_view(group_sum.data(), S, C, device);
  unvalidated(ctx, [&] { scatter_reduce<T, I>(values, index, ReduceOp::Max, max_view, {}, ctx); });
  if (device.is_cpu()) {
    scatter_softmax_detail::exponentials_cpu(values.data, index.data, M, C, group_max.data(), out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_softmax_detail::exponentials_cuda(values.data, index.data, M, C, group_max.data(), out.data, ctx);
#endif
  }
  unvalidated(ctx, [&] {
    scatter_reduce<T, I>(MatrixView<const T>(out.data, M, C, device), index, ReduceOp::Sum, sum_view, {}, ctx);
  });
  if (device.is_cpu()) {
    scatter_softmax_detail::normalise_cpu(values.data, index.data, M, C, S, group_max.data(), group_sum.data(), kind,
                                          eps, out.data);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_softmax_detail::normalise_cuda(values.data, index.data, M, C, S, group_max.data(), group_sum.data(), kind,
                                           eps, out.data, ctx);
#endif
  }
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                            \
  template void scatter_softmax<T, I>(MatrixView<const T>, VectorView<const I>, int64_t, SoftmaxKind, double, \
                                      MatrixView<T>, Context&);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_INSTANTIATE(float)
EW_INSTANTIATE(double)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise
