// scatter_reduce backend entry points (inputs already validated by scatter_reduce.cpp).
#pragma once

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

template <class T, class I>
void scatter_reduce_transposed_cpu(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                   MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  // The transposed driver runs 16-bit types on the baseline copy: its AVX-512 copies
  // measured slower there (1M x 16 bfloat16 sum into 10K: 10.8 vs 7.7 ms; not analysed).
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, scatter_reduce_transposed_cpu, values_t, index, op, out_t, arg_t,
                         ctx);
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
