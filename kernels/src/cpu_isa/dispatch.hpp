// Per-ISA translation units of the kernels and their dispatch (see
// edgewise/kernels/cpu_isa_dispatch.hpp).
//
// A dispatched CPU file puts its code in `namespace EW_CPU_ISA_NS` inside its detail
// namespace; the build compiles it once per level with EW_CPU_ISA_NS set to
// isa_baseline / isa_avx2 / isa_avx512 and the level's -march (kernels/CMakeLists.txt,
// EDGEWISE_ISA_DISPATCH_SOURCES). Its backends header declares the entry points once
// per level with EW_DECLARE_PER_CPU_ISA and defines the dispatcher with the original
// name, which calls the copy for cpu_isa() through EW_DISPATCH_CPU_ISA.
#pragma once

#include <type_traits>

#include "edgewise/kernels/cpu_isa_dispatch.hpp"

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#define EW_CPU_ISA_LEVEL 0  // 0 baseline, 1 avx2, 2 avx512 (EDGEWISE_ISA_LEVELS_ALL)
#endif

#include "edgewise/kernels/common/half.hpp"

namespace edgewise {

// Element types whose reductions (segment_reduce, scatter_reduce, spmm) get the
// AVX2 / AVX-512 copies: float only, what GNN features are. Each further type
// would add two more compiles of the most template-heavy files to every build,
// for types that are rarely hot; they run the baseline copy.
template <class T>
inline constexpr bool kIsaDispatchedElement = std::is_same_v<T, float>;

// scatter_reduce and segment_reduce also dispatch the 16-bit floats (torch_scatter's
// bfloat16 / float16 callers): their baseline copy converts element by element, and
// min/max with arg at bfloat16 ran slower than torch's scatter_reduce and
// segment_reduce, which compute no arg. Their rows take
// the generic column loop (row_width.hpp specialises float's alone), which keeps the
// added compile time to about one float copy per level.
template <class T>
inline constexpr bool kIsaDispatchedScatterElement = kIsaDispatchedElement<T> || kHalfType<T>;

}  // namespace edgewise
