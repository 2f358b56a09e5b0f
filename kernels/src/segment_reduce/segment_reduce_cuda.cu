// segment_reduce CUDA driver: the shared gather-reduce engine
// (gather_reduce/gather_reduce_cuda.cuh) over a contiguous source, edge e = row e.
#include "gather_reduce/gather_reduce_cuda.cuh"
#include "segment_reduce/segment_reduce_backends.hpp"

namespace edgewise::segment_reduce_detail {

template <class T>
void segment_reduce_cuda(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                         MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  using namespace gather_reduce_detail;
  const ContiguousRows<T> source{values.data, values.cols};
  const RowsOut<T> dest{offsets.data, out.rows, out.cols, values.rows, out.data, arg.present() ? arg.data : nullptr};
  gather_reduce_cuda_dispatch(source, dest, op, ctx);
}

template void segment_reduce_cuda<float>(MatrixView<const float>, VectorView<const int64_t>, ReduceOp,
                                         MatrixView<float>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<double>(MatrixView<const double>, VectorView<const int64_t>, ReduceOp,
                                          MatrixView<double>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<int32_t>(MatrixView<const int32_t>, VectorView<const int64_t>, ReduceOp,
                                           MatrixView<int32_t>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<uint32_t>(MatrixView<const uint32_t>, VectorView<const int64_t>, ReduceOp,
                                            MatrixView<uint32_t>, MatrixView<int64_t>, Context&);

}  // namespace edgewise::segment_reduce_detail
