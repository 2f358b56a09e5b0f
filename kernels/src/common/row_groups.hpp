// When a CPU driver should group its rows by output first (row_groups_cpu.hpp does
// it): host code, no OpenMP, so device files may include it beside their CPU twins.
#pragma once

#include <cstdint>

namespace edgewise::row_groups_detail {

// Grouping pays once a driver's per-output state (S x C elements, for every output)
// outgrows a last-level cache: 32 MiB, the 2-core AMD EPYC's L3 share. The measured
// crossovers are in the drivers (scatter_reduce_cpu.cpp, scatter_softmax_cpu.cpp).
inline constexpr double kGroupingMinStateBytes = 32.0 * (1 << 20);

// Whether to group M rows whose ungrouped state takes `state_bytes` (group_rows keeps
// row numbers in 32 bits).
inline bool grouping_pays(int64_t M, double state_bytes) {
  return M <= (int64_t{1} << 32) && state_bytes > kGroupingMinStateBytes;
}

}  // namespace edgewise::row_groups_detail
