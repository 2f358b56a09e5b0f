// spmm backend entry points (inputs already validated by spmm.cpp). The drivers are
// generic over the row source (spmm_core.hpp): GatherRows for spmm and its sum/mean
// backward, ArgGradRows for the min/max backward.
#pragma once

#include <cstdint>

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "spmm/spmm_core.hpp"

namespace edgewise::spmm_detail {

// The CPU drivers, one copy per ISA level (float; other types: baseline only) (spmm_cpu.cpp; cpu_isa/dispatch.hpp).
// weight_backward_cpu: grad_w[e] for every edge of the forward CSR (arg: the
// forward's arg, min/max only).
EW_DECLARE_PER_CPU_ISA(
    template <class T, class I>
    void gather_reduce_cpu(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);
    template <class T, class I>
    void gather_reduce_cpu(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);
    template <class T, class I>
    void weight_backward_cpu(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                             const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w);)

// The copies for cpu_isa().
template <class T, class I>
void gather_reduce_cpu(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, gather_reduce_cpu, source, dest, op, ctx);
}
template <class T, class I>
void gather_reduce_cpu(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, gather_reduce_cpu, source, dest, op, ctx);
}
template <class T, class I>
void weight_backward_cpu(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                         const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, weight_backward_cpu, offsets, rows, edges, indices, x, grad_out, arg, cols, op, grad_w);
}

template <class T, class I>
void gather_reduce_cuda(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);
template <class T, class I>
void gather_reduce_cuda(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);
template <class T, class I>
void weight_backward_cuda(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                          const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w, Context& ctx);

// spmm sum through cusparseSpMM (weights: [E] direct, or gathered through weight_ids).
template <class T, class I>
void spmm_cusparse(const GatherRows<T, I>& source, const RowsOut<T>& dest, int64_t source_rows, Context& ctx);

}  // namespace edgewise::spmm_detail
