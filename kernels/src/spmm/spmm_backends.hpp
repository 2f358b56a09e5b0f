// spmm backend entry points (inputs already validated by spmm.cpp). The drivers are
// generic over the row source (spmm_core.hpp): GatherRows for spmm and its sum/mean
// backward, ArgGradRows for the min/max backward.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "spmm/spmm_core.hpp"

namespace edgewise::spmm_detail {

template <class T, class I>
void gather_reduce_cpu(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);
template <class T, class I>
void gather_reduce_cpu(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx);

// grad_w[e] for every edge of the forward CSR (arg: the forward's arg, min/max only).
template <class T, class I>
void weight_backward_cpu(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                         const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w);

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
