// The row widths the CPU reduction kernels (segment_reduce, scatter_reduce, spmm)
// compile as constants: a fixed trip count unrolls the column loops and keeps the
// accumulators in registers; width 0 is the generic loop over any column count.
#pragma once

#include <cstdint>
#include <type_traits>

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/reduce_op.hpp"

// 0: the generic loop for every width (CMake option EDGEWISE_SPECIALISE_ROW_WIDTHS).
#ifndef EW_SPECIALISE_ROW_WIDTHS
#define EW_SPECIALISE_ROW_WIDTHS 1
#endif

namespace edgewise {

template <int W>
using RowWidth = std::integral_constant<int, W>;

// The ops a GNN aggregates with; mul, var and std (rarer, with bulkier state) take
// the generic loop at every width.
template <ReduceOp Op>
inline constexpr bool kWidthSpecialisedOp =
    Op == ReduceOp::Sum || Op == ReduceOp::Mean || Op == ReduceOp::Min || Op == ReduceOp::Max;

// The element types that take the generic loop at every width, width 1 included:
// int64 and the 16-bit floats (torch_scatter's dtypes, rarely an engine's hot path).
template <class T>
inline constexpr bool kGenericRowsOnly = kHalfType<T> || std::is_same_v<T, int64_t>;

// Calls f(RowWidth<W>{}) with W = cols when that width is specialised for T and Op,
// else with W = 0. Every power of two up to 128 for float (GNN features) and the
// ops above; width 1 (the scalar case: degrees, counts) and the generic loop for
// double, int32 and uint32; the generic loop alone for kGenericRowsOnly types. Each
// specialised width is another instantiation of a kernel for every op, index type
// and ISA level: what is rarely hot doesn't pay for them in build time.
template <class T, ReduceOp Op, class F>
void visit_row_width(int64_t cols, F&& f) {
  if constexpr (kIsaDispatchedElement<T> && kWidthSpecialisedOp<Op> && EW_SPECIALISE_ROW_WIDTHS) {
    switch (cols) {
      case 2: return f(RowWidth<2>{});
      case 4: return f(RowWidth<4>{});
      case 8: return f(RowWidth<8>{});
      case 16: return f(RowWidth<16>{});
      case 32: return f(RowWidth<32>{});
      case 64: return f(RowWidth<64>{});
      case 128: return f(RowWidth<128>{});
      default: break;
    }
  }
  if constexpr (!kGenericRowsOnly<T>) {
    if (cols == 1) return f(RowWidth<1>{});
  }
  return f(RowWidth<0>{});
}

}  // namespace edgewise
