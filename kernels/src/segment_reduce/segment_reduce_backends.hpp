// segment_reduce backend entry points (inputs already validated by segment_reduce.cpp).
#pragma once

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::segment_reduce_detail {

// The CPU driver, one copy per ISA level (float; other types: baseline only) (segment_reduce_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class T>
    void segment_reduce_cpu(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                            MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx);)

// The copy for cpu_isa().
template <class T>
void segment_reduce_cpu(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                        MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, segment_reduce_cpu, values, offsets, op, out, arg, ctx);
}

template <class T>
void segment_reduce_cuda(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                         MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx);

}  // namespace edgewise::segment_reduce_detail
