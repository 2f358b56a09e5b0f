// edge_softmax backend entry points (inputs already validated by edge_softmax.cpp).
#pragma once

#include <cstdint>

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/common/context.hpp"

namespace edgewise::edge_softmax_detail {

// The CPU driver, one copy per ISA level (float; double: baseline only)
// (edge_softmax_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class T>
    void edge_softmax_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out);
    template <class T>
    void edge_softmax_backward_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* out,
                                   const T* grad_out, T* grad_scores);)

// The copies for cpu_isa().
template <class T>
void edge_softmax_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, edge_softmax_cpu, offsets, rows, heads, scores, out);
}
template <class T>
void edge_softmax_backward_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                               T* grad_scores) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedElement<T>, edge_softmax_backward_cpu, offsets, rows, heads, out, grad_out,
                         grad_scores);
}

template <class T>
void edge_softmax_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out, Context& ctx);
template <class T>
void edge_softmax_backward_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                                T* grad_scores, Context& ctx);

}  // namespace edgewise::edge_softmax_detail
