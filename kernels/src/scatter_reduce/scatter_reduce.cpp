// scatter_reduce: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/scatter_reduce.hpp"

#include <type_traits>

#include "common/cuda_backend.hpp"
#include "common/index_range.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/monotone.hpp"
#include "scatter_reduce/scatter_reduce_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "scatter_reduce";

template <class T, class I>
void check_arguments(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                     MatrixView<int64_t> arg, Context& ctx) {
  using detail::require_device;
  EW_REQUIRE(values.rows >= 0 && values.cols >= 1, kOp, ": values must be [M, C] with C >= 1 (got [",
             values.rows, ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, kOp, ": values is null but has ", values.size(),
             " elements");
  EW_REQUIRE(index.size == values.rows, kOp, ": index.size() (", index.size, ") must equal values.rows() (",
             values.rows, ")");
  EW_REQUIRE(index.data != nullptr || index.size == 0, kOp, ": index is null but has ", index.size, " elements");
  EW_REQUIRE(out.rows >= 0, kOp, ": out.rows() (", out.rows, ") must be >= 0");
  EW_REQUIRE(out.cols == values.cols, kOp, ": out.cols() (", out.cols, ") must equal values.cols() (", values.cols,
             ")");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, kOp, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(!std::is_integral_v<T> || defined_for_integers(op), kOp, ": op ", to_string(op),
             " is defined for floating-point values only (dtype is ", element_type_name<T>(), ")");
  require_device(kOp, "values", values.device, ctx);
  require_device(kOp, "index", index.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  if (arg.present()) {
    EW_REQUIRE(has_arg(op), kOp, ": arg is only defined for min and max (op is ", to_string(op), ")");
    EW_REQUIRE(arg.rows == out.rows && arg.cols == out.cols, kOp, ": arg must be [", out.rows, ", ", out.cols,
               "] like out (got [", arg.rows, ", ", arg.cols, "])");
    require_device(kOp, "arg", arg.device, ctx);
  }
  // The packed min/max word holds the row in 32 bits (common/monotone.hpp).
  EW_REQUIRE(!has_arg(op) || values.rows <= kPackedMaxRow + 1, kOp, ": ", to_string(op),
             " stores the winning row in 32 bits, so values.rows() (", values.rows, ") must be at most ",
             kPackedMaxRow + 1);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(kOp, "index", index, out.rows, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("out", out), named("arg", arg)},
                                     {named("values", values), named("index", index)});
  }
}
// The same checks in the transposed layout: values_t [C, M], out_t / arg_t [C, S].
template <class T, class I>
void check_transposed_arguments(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  using detail::require_device;
  constexpr const char* kT = "scatter_reduce_transposed";
  EW_REQUIRE(values_t.rows >= 1 && values_t.cols >= 0, kT, ": values_t must be [C, M] with C >= 1 (got [",
             values_t.rows, ", ", values_t.cols, "])");
  EW_REQUIRE(values_t.data != nullptr || values_t.size() == 0, kT, ": values_t is null but has ", values_t.size(),
             " elements");
  EW_REQUIRE(index.size == values_t.cols, kT, ": index.size() (", index.size, ") must equal values_t.cols() (",
             values_t.cols, ")");
  EW_REQUIRE(index.data != nullptr || index.size == 0, kT, ": index is null but has ", index.size, " elements");
  EW_REQUIRE(out_t.rows == values_t.rows && out_t.cols >= 0, kT, ": out_t.rows() (", out_t.rows,
             ") must equal values_t.rows() (", values_t.rows, ")");
  EW_REQUIRE(out_t.data != nullptr || out_t.size() == 0, kT, ": out_t is null but has ", out_t.size(), " elements");
  EW_REQUIRE(!std::is_integral_v<T> || defined_for_integers(op), kT, ": op ", to_string(op),
             " is defined for floating-point values only (dtype is ", element_type_name<T>(), ")");
  require_device(kT, "values_t", values_t.device, ctx);
  require_device(kT, "index", index.device, ctx);
  require_device(kT, "out_t", out_t.device, ctx);
  if (arg_t.present()) {
    EW_REQUIRE(has_arg(op), kT, ": arg_t is only defined for min and max (op is ", to_string(op), ")");
    EW_REQUIRE(arg_t.rows == out_t.rows && arg_t.cols == out_t.cols, kT, ": arg_t must be [", out_t.rows, ", ",
               out_t.cols, "] like out_t (got [", arg_t.rows, ", ", arg_t.cols, "])");
    require_device(kT, "arg_t", arg_t.device, ctx);
  }
  EW_REQUIRE(!has_arg(op) || values_t.cols <= kPackedMaxRow + 1, kT, ": ", to_string(op),
             " stores the winning row in 32 bits, so values_t.cols() (", values_t.cols, ") must be at most ",
             kPackedMaxRow + 1);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(kT, "index", index, out_t.cols, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kT, {named("out_t", out_t), named("arg_t", arg_t)},
                                     {named("values_t", values_t), named("index", index)});
  }
}
}  // namespace

template <class T, class I>
void scatter_reduce_transposed(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                               MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  check_transposed_arguments(values_t, index, op, out_t, arg_t, ctx);
  if (out_t.size() == 0) return;
  if (ctx.device().is_cpu()) {
    scatter_reduce_detail::scatter_reduce_transposed_cpu(values_t, index, op, out_t, arg_t, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_reduce_detail::scatter_reduce_transposed_cuda(values_t, index, op, out_t, arg_t, ctx);
#else
    detail::throw_built_without_cuda("scatter_reduce_transposed");
#endif
  }
}

template <class T, class I>
void scatter_reduce(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                    MatrixView<int64_t> arg, Context& ctx) {
  check_arguments(values, index, op, out, arg, ctx);
  if (out.size() == 0) return;
  if (ctx.device().is_cpu()) {
    scatter_reduce_detail::scatter_reduce_cpu(values, index, op, out, arg, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    scatter_reduce_detail::scatter_reduce_cuda(values, index, op, out, arg, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T, class I>
void scatter_reduce(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                    MatrixView<int64_t> arg) {
  scatter_reduce(values, index, op, out, arg, default_context(values.device));
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                               \
  template void scatter_reduce<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>,        \
                                     MatrixView<int64_t>, Context&);                                           \
  template void scatter_reduce<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>,        \
                                     MatrixView<int64_t>);                                                     \
  template void scatter_reduce_transposed<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                                MatrixView<int64_t>, Context&);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise
