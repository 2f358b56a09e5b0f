// segment_reduce: validation, then dispatch to the CPU or CUDA driver.
#include "edgewise/kernels/segment_reduce.hpp"

#include <type_traits>

#include "common/cuda_backend.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "segment_reduce/segment_reduce_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kOp = "segment_reduce";

template <class T>
void check_arguments(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                     MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  using detail::require_device;
  EW_REQUIRE(values.rows >= 0 && values.cols >= 1, kOp, ": values must be [M, C] with C >= 1 (got [",
             values.rows, ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, kOp, ": values is null but has ", values.size(),
             " elements");
  EW_REQUIRE(offsets.size == out.rows + 1, kOp, ": offsets.size() (", offsets.size,
             ") must equal out.rows() + 1 (", out.rows + 1, ")");
  EW_REQUIRE(out.cols == values.cols, kOp, ": out.cols() (", out.cols, ") must equal values.cols() (",
             values.cols, ")");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, kOp, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(!std::is_integral_v<T> || defined_for_integers(op), kOp, ": op ", to_string(op),
             " is defined for floating-point values only (dtype is ", element_type_name<T>(), ")");
  require_device(kOp, "values", values.device, ctx);
  require_device(kOp, "offsets", offsets.device, ctx);
  require_device(kOp, "out", out.device, ctx);
  if (arg.present()) {
    EW_REQUIRE(has_arg(op), kOp, ": arg is only defined for min and max (op is ", to_string(op), ")");
    EW_REQUIRE(arg.rows == out.rows && arg.cols == out.cols, kOp, ": arg must be [", out.rows, ", ",
               out.cols, "] like out (got [", arg.rows, ", ", arg.cols, "])");
    require_device(kOp, "arg", arg.device, ctx);
  }
  if (ctx.validate) {
    detail::validate_offsets(kOp, "offsets", offsets, values.rows, ctx);
    using detail::named;
    detail::require_outputs_disjoint(kOp, {named("out", out), named("arg", arg)},
                                     {named("values", values), named("offsets", offsets)});
  }
}
}  // namespace

template <class T>
void segment_reduce(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                    MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  check_arguments(values, offsets, op, out, arg, ctx);
  if (out.size() == 0) return;
  if (ctx.device().is_cpu()) {
    segment_reduce_detail::segment_reduce_cpu(values, offsets, op, out, arg, ctx);
  } else {
#if EDGEWISE_WITH_CUDA
    segment_reduce_detail::segment_reduce_cuda(values, offsets, op, out, arg, ctx);
#else
    detail::throw_built_without_cuda(kOp);
#endif
  }
}

template <class T>
void segment_reduce(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                    MatrixView<T> out, MatrixView<int64_t> arg) {
  segment_reduce(values, offsets, op, out, arg, default_context(values.device));
}

#define EW_INSTANTIATE(T)                                                                             \
  template void segment_reduce<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                  MatrixView<int64_t>, Context&);                                     \
  template void segment_reduce<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                  MatrixView<int64_t>);
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE

}  // namespace edgewise
