// Backend entry points of the reduction backward (inputs validated by the callers:
// reduce_backward.cpp and spmm.cpp). out / arg / grad_out are the forward's [S, C].
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"
#include "gather_reduce/gather_reduce_core.hpp"
#include "spmm/spmm_core.hpp"

namespace edgewise::reduce_backward_detail {

// The gradient [E, C] of the elements of a CSR gather-reduce (dest.offsets, rows):
// segment_reduce's source rows or spmm's messages. dest.out is the forward's out.
// grad_w (optional, spmm: the weights' gradient [E]) gets sum_c grad[e, c] * x[src_e, c],
// the gathered row being Source::edge(e).row.
template <class Source, class T>
struct CsrGrad {
  Source source;
  bool scaled = false;              // messages carry the source's coefficient
  const int64_t* offsets = nullptr; // [rows + 1]
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t edges = 0;                // E (offsets[rows])
  const T* out = nullptr;
  const int64_t* arg = nullptr;     // min/max under TieRule::First
  TieRule tie_rule = TieRule::First;  // min/max: a split rule leaves arg unused
  const T* grad_out = nullptr;
  T* grad = nullptr;                // [E, cols]
  T* grad_w = nullptr;              // [E] or null
};

template <class T>
void segment_grad_cpu(const CsrGrad<gather_reduce_detail::ContiguousRows<T>, T>& g, ReduceOp op);
template <class T, class I>
void spmm_grad_cpu(const CsrGrad<spmm_detail::GatherRows<T, I>, T>& g, ReduceOp op);
// arg: min/max under TieRule::First (the split rules read out only).
template <class T, class I>
void scatter_grad_cpu(const T* values, const I* index, int64_t M, int64_t S, int64_t C, ReduceOp op, const T* out,
                      const int64_t* arg, TieRule tie_rule, const T* grad_out, T* grad_values);

template <class T>
void segment_grad_cuda(const CsrGrad<gather_reduce_detail::ContiguousRows<T>, T>& g, ReduceOp op, Context& ctx);
template <class T, class I>
void spmm_grad_cuda(const CsrGrad<spmm_detail::GatherRows<T, I>, T>& g, ReduceOp op, Context& ctx);
template <class T, class I>
void scatter_grad_cuda(const T* values, const I* index, int64_t M, int64_t S, int64_t C, ReduceOp op, const T* out,
                       const int64_t* arg, TieRule tie_rule, const T* grad_out, T* grad_values, Context& ctx);

}  // namespace edgewise::reduce_backward_detail
