// Sequential oracle for galloping_search: std::lower_bound per query over a gathered
// copy of each segment, the validation bits computed directly from their definitions.
// Obviously correct, never optimised.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "edgewise/kernels/galloping_search.hpp"

namespace edgewise::reference {

struct GallopingResult {
  std::vector<int64_t> positions;  // starts as `initial`; malformed segments leave theirs
  uint32_t validation = 0;
};

// segments: S records of 4 int64. order: empty optional = no value_order.
// max_query_count < 0: no cap.
template <class T>
GallopingResult galloping_search_ref(const std::vector<T>& values, const std::optional<std::vector<int64_t>>& order,
                                     const std::vector<T>& queries, const std::vector<int64_t>& segments,
                                     int64_t queries_per_tile, int64_t max_query_count,
                                     const std::vector<int64_t>& initial) {
  GallopingResult r{initial, 0};
  const int64_t V = order ? static_cast<int64_t>(order->size()) : static_cast<int64_t>(values.size());
  const int64_t Q = static_cast<int64_t>(queries.size());
  const int64_t S = static_cast<int64_t>(segments.size()) / 4;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t vo = segments[4 * s], vc = segments[4 * s + 1];
    const int64_t qo = segments[4 * s + 2], qc = segments[4 * s + 3];
    bool bad = false;
    // Subtractions, not sums: the tests include offsets near INT64_MAX.
    if (vo < 0 || vc < 0 || vo > V || vc > V - vo) {
      r.validation |= GallopingSearchErrors::kValueRange;
      bad = true;
    }
    if (qo < 0 || qc < 0 || qo > Q || qc > Q - qo || (max_query_count >= 0 && qc > max_query_count)) {
      r.validation |= GallopingSearchErrors::kQueryRange;
      bad = true;
    }
    if (bad) continue;
    std::vector<T> seq;
    for (int64_t i = 0; i < vc; ++i) seq.push_back(order ? values[(*order)[vo + i]] : values[vo + i]);
    // The previous non-NaN query of the current tile (a flag and a value, not
    // std::optional: GCC's -Wmaybe-uninitialized misfires on that at -O1).
    bool has_previous = false;
    T previous{};
    for (int64_t k = 0; k < qc; ++k) {
      if (k % queries_per_tile == 0) has_previous = false;
      const T q = queries[qo + k];
      if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(q)) r.validation |= GallopingSearchErrors::kNonFiniteQuery;
        if (std::isnan(q)) {
          r.positions[qo + k] = vo + vc;
          continue;
        }
      }
      if (has_previous && q < previous) r.validation |= GallopingSearchErrors::kDecreasingQueries;
      has_previous = true;
      previous = q;
      r.positions[qo + k] = vo + (std::lower_bound(seq.begin(), seq.end(), q) - seq.begin());
    }
  }
  return r;
}

}  // namespace edgewise::reference
