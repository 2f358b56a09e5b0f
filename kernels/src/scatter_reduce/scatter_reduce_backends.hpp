// scatter_reduce backend entry points (inputs already validated by scatter_reduce.cpp).
#pragma once

#include "edgewise/kernels/scatter_reduce.hpp"

namespace edgewise::scatter_reduce_detail {

template <class T, class I>
void scatter_reduce_cpu(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                        MatrixView<int64_t> arg, Context& ctx);

template <class T, class I>
void scatter_reduce_cuda(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                         MatrixView<int64_t> arg, Context& ctx);

}  // namespace edgewise::scatter_reduce_detail
