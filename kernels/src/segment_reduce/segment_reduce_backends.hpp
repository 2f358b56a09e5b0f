// segment_reduce backend entry points (inputs already validated by segment_reduce.cpp).
#pragma once

#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::segment_reduce_detail {

template <class T>
void segment_reduce_cpu(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                        MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx);

template <class T>
void segment_reduce_cuda(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                         MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx);

}  // namespace edgewise::segment_reduce_detail
