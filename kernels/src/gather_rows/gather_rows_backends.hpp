// gather_rows backend entry points on raw words (inputs already validated by gather_rows.cpp).
#pragma once

#include "edgewise/kernels/common/context.hpp"
#include "gather_rows/gather_rows_core.hpp"

namespace edgewise::gather_rows_detail {

template <class W>
void gather_rows_csr_cpu(const CsrSpread<W>& p);
// With p.check_index: the first (row-major) position of index outside [0, S), or -1.
template <class W, class I>
int64_t gather_rows_coo_cpu(const CooPick<W, I>& p);

template <class W>
void gather_rows_csr_cuda(const CsrSpread<W>& p, Context& ctx);
template <class W, class I>
void gather_rows_coo_cuda(const CooPick<W, I>& p, Context& ctx);
// The first (row-major) position of offsets [rows, S + 1] that breaks offset_ok, or -1.
int64_t first_bad_offset_cuda(const int64_t* offsets, int64_t rows, int64_t S, int64_t M, Context& ctx);

}  // namespace edgewise::gather_rows_detail
