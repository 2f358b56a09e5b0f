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

#define EW_INSTANTIATE(T)                                                                                 \
  template void segment_reduce_cuda<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                       MatrixView<int64_t>, Context&);
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE

}  // namespace edgewise::segment_reduce_detail
