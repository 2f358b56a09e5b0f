// sddmm backend entry points (inputs already validated by sddmm.cpp).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/context.hpp"
#include "sddmm/sddmm_core.hpp"

namespace edgewise::sddmm_detail {

// The CSR the per-edge forms run over: S rows, E edges.
template <class I>
struct EdgeCsr {
  const int64_t* offsets = nullptr;
  int64_t rows = 0;
  const I* indices = nullptr;
  int64_t edges = 0;
};

template <class T, class I>
void sddmm_dot_cpu(const EdgeCsr<I>& g, const T* x, const T* y, int64_t heads, int64_t d, T* out);
template <class T, class I>
void sddmm_add_cpu(const EdgeCsr<I>& g, const T* a, const T* b, int64_t heads, T* out);
template <class T, class I>
void edge_gather_sum_cpu(const GatherSum<T, I>& args, int64_t rows, T* out);

template <class T, class I>
void sddmm_dot_cuda(const EdgeCsr<I>& g, const T* x, const T* y, int64_t heads, int64_t d, T* out, Context& ctx);
template <class T, class I>
void sddmm_add_cuda(const EdgeCsr<I>& g, const T* a, const T* b, int64_t heads, T* out, Context& ctx);
template <class T, class I>
void edge_gather_sum_cuda(const GatherSum<T, I>& args, int64_t rows, T* out, Context& ctx);

}  // namespace edgewise::sddmm_detail
