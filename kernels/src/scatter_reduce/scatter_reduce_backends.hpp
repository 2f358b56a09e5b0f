// scatter_reduce backend entry points (inputs already validated by scatter_reduce.cpp).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"

namespace edgewise::scatter_reduce_detail {

// The CPU driver, one copy per ISA level (float, Half, BFloat16; other types: baseline only) (scatter_reduce_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class T, class I>
    void scatter_reduce_cpu(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                            MatrixView<int64_t> arg, Context& ctx);
    template <class T, class I>
    void scatter_reduce_transposed_cpu(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                       MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx);)

// The copy for cpu_isa().
template <class T, class I>
void scatter_reduce_cpu(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                        MatrixView<int64_t> arg, Context& ctx) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, scatter_reduce_cpu, values, index, op, out, arg, ctx);
}

// The transposed driver's threads (the C columns split among up to C of them) and
// the columns each folds at most.
inline int64_t transposed_threads(int64_t cols) {
  return std::max<int64_t>(1, std::min<int64_t>(omp_get_max_threads(), cols));
}
inline int64_t transposed_columns_per_thread(int64_t cols) {
  const int64_t threads = transposed_threads(cols);
  return (cols + threads - 1) / threads;
}

template <class T, class I>
void scatter_reduce_transposed_cpu(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                   MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  // 16-bit types fold in the generic column loop: with 16 or more columns per thread
  // the vector copies win (1M x 64 bfloat16 into 10K / 100K, max with arg, 2 threads:
  // 22 / 46 ms at AVX-512 zmm, 40 / 90 ms baseline), with 8 they leave most of a vector
  // idle and lose (1M x 16: 25 / 22 ms against 9 / 17 ms).
  if constexpr (kHalfType<T>) {
    if (transposed_columns_per_thread(values_t.rows) < 16) {
      return isa_baseline::scatter_reduce_transposed_cpu(values_t, index, op, out_t, arg_t, ctx);
    }
  }
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, scatter_reduce_transposed_cpu, values_t, index, op, out_t,
                         arg_t, ctx);
}

template <class T, class I>
void scatter_reduce_cuda(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                         MatrixView<int64_t> arg, Context& ctx);

// Transposes values_t into a row-major copy, runs scatter_reduce_cuda and transposes
// the outputs back (scatter_reduce_cuda.cu).
template <class T, class I>
void scatter_reduce_transposed_cuda(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                    MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx);

}  // namespace edgewise::scatter_reduce_detail
