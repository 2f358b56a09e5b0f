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
}  // namespace

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
                                     MatrixView<int64_t>);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise
