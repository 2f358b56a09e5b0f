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

// The checks of both layouts. The problem is M rows of C columns into S outputs: values
// [M, C], out / arg [S, C], or with `transposed` values_t [C, M], out_t / arg_t [C, S]
// (the views, their dimensions and the operator named as the caller knows them).
template <class T, class I>
void check_arguments(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                     MatrixView<int64_t> arg, bool transposed, Context& ctx) {
  using detail::require_device;
  const char* op_name = transposed ? "scatter_reduce_transposed" : kOp;
  const char* vn = transposed ? "values_t" : "values";
  const char* on = transposed ? "out_t" : "out";
  const char* an = transposed ? "arg_t" : "arg";
  const char* rows_of_m = transposed ? ".cols() (" : ".rows() (";  // the dimension of M (and of S in out)
  const char* cols_of_c = transposed ? ".rows() (" : ".cols() (";  // the dimension of C
  const int64_t M = transposed ? values.cols : values.rows, C = transposed ? values.rows : values.cols;
  const int64_t S = transposed ? out.cols : out.rows, out_c = transposed ? out.rows : out.cols;
  EW_REQUIRE(M >= 0 && C >= 1, op_name, ": ", vn, " must be ", transposed ? "[C, M]" : "[M, C]",
             " with C >= 1 (got [", values.rows, ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, op_name, ": ", vn, " is null but has ", values.size(),
             " elements");
  EW_REQUIRE(index.size == M, op_name, ": index.size() (", index.size, ") must equal ", vn, rows_of_m, M, ")");
  EW_REQUIRE(index.data != nullptr || index.size == 0, op_name, ": index is null but has ", index.size, " elements");
  EW_REQUIRE(S >= 0, op_name, ": ", on, rows_of_m, S, ") must be >= 0");
  EW_REQUIRE(out_c == C, op_name, ": ", on, cols_of_c, out_c, ") must equal ", vn, cols_of_c, C, ")");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, op_name, ": ", on, " is null but has ", out.size(), " elements");
  EW_REQUIRE(!std::is_integral_v<T> || defined_for_integers(op), op_name, ": op ", to_string(op),
             " is defined for floating-point values only (dtype is ", element_type_name<T>(), ")");
  require_device(op_name, vn, values.device, ctx);
  require_device(op_name, "index", index.device, ctx);
  require_device(op_name, on, out.device, ctx);
  if (arg.present()) {
    EW_REQUIRE(has_arg(op), op_name, ": ", an, " is only defined for min and max (op is ", to_string(op), ")");
    EW_REQUIRE(arg.rows == out.rows && arg.cols == out.cols, op_name, ": ", an, " must be [", out.rows, ", ",
               out.cols, "] like ", on, " (got [", arg.rows, ", ", arg.cols, "])");
    require_device(op_name, an, arg.device, ctx);
  }
  // The packed min/max word holds the row in 32 bits (common/monotone.hpp).
  EW_REQUIRE(!has_arg(op) || M <= kPackedMaxRow + 1, op_name, ": ", to_string(op),
             " stores the winning row in 32 bits, so ", vn, rows_of_m, M, ") must be at most ", kPackedMaxRow + 1);
  if (ctx.validate) {
    if (index.size > 0) detail::validate_index_range(op_name, "index", index, S, nullptr, ctx);
    using detail::named;
    detail::require_outputs_disjoint(op_name, {named(on, out), named(an, arg)},
                                     {named(vn, values), named("index", index)});
  }
}
}  // namespace

template <class T, class I>
void scatter_reduce_transposed(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                               MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  check_arguments(values_t, index, op, out_t, arg_t, true, ctx);
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
  check_arguments(values, index, op, out, arg, false, ctx);
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
