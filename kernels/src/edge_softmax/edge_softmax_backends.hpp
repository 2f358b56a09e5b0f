// edge_softmax backend entry points (inputs already validated by edge_softmax.cpp).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"

namespace edgewise::edge_softmax_detail {

template <class T>
void edge_softmax_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out);
template <class T>
void edge_softmax_backward_cpu(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                               T* grad_scores);

template <class T>
void edge_softmax_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* scores, T* out, Context& ctx);
template <class T>
void edge_softmax_backward_cuda(const int64_t* offsets, int64_t rows, int64_t heads, const T* out, const T* grad_out,
                                T* grad_scores, Context& ctx);

}  // namespace edgewise::edge_softmax_detail
