// Finding the nonzero entries of dense float rows (for CSR construction): a
// vectorisable count, and a compaction that skips all-zero blocks of 16.
#pragma once

#include <cstdint>

#include "edgewise/gnn/data/csr_matrix.hpp"

namespace edgewise::gnn {

// Entries of row[0, n) that compare unequal to 0 (NaN included).
inline int64_t count_nonzeros(const float* row, int64_t n) {
  int64_t count = 0;
#pragma omp simd reduction(+ : count)
  for (int64_t j = 0; j < n; ++j) count += row[j] != 0.0f;
  return count;
}

// Writes the column and value of each nonzero of row[0, n) in ascending order;
// returns how many. Blocks of 16 are tested with one vector compare first: the
// features this serves are ~99 % zeros.
inline int64_t write_nonzeros(const float* row, int64_t n, int32_t* cols, float* vals) {
  constexpr int64_t kBlock = 16;
  int64_t k = 0, j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    bool any = false;
#pragma omp simd reduction(| : any)
    for (int64_t t = 0; t < kBlock; ++t) any |= row[j + t] != 0.0f;
    if (!any) continue;
    for (int64_t t = j; t < j + kBlock; ++t) {
      if (row[t] != 0.0f) {
        cols[k] = static_cast<int32_t>(t);
        vals[k++] = row[t];
      }
    }
  }
  for (; j < n; ++j) {
    if (row[j] != 0.0f) {
      cols[k] = static_cast<int32_t>(j);
      vals[k++] = row[j];
    }
  }
  return k;
}

// Appends `num_rows` dense rows of `cols` floats (row-major at `data`) to `m`,
// whose offsets already describe the rows before them. With `parallel`, OpenMP
// over rows: counts, one prefix sum, then each row writes its own disjoint range
// (serial when called from a pipeline thread that must not start a team).
void append_nonzero_rows(const float* data, int64_t num_rows, int64_t cols, CsrMatrix& m, bool parallel = true);

}  // namespace edgewise::gnn
