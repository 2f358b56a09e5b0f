// Sequential oracle for scatter_reduce: groups rows by index, then reuses the
// segment_reduce oracle (reduce_rows_ref), so both ops share one definition of
// sum/mean/min/max/arg. Obviously correct, never optimised.
#pragma once

#include <cstdint>
#include <vector>

#include "segment_reduce_ref.hpp"

namespace edgewise::reference {

// values [M, C], index [M] with every entry in [0, S) -> out/arg/scale [S, C].
template <class T, class I>
ReduceResult<T> scatter_reduce_ref(const std::vector<T>& values, int64_t C, const std::vector<I>& index, int64_t S,
                                   ReduceOp op) {
  std::vector<std::vector<int64_t>> rows_of(static_cast<size_t>(S));
  for (size_t r = 0; r < index.size(); ++r) rows_of[static_cast<size_t>(index[r])].push_back(static_cast<int64_t>(r));
  return reduce_rows_ref(values, C, rows_of, op);
}

}  // namespace edgewise::reference
