// append_nonzero_rows: the parallel dense-rows -> CSR step shared by
// CsrMatrix::from_dense and the streaming feature loader.
#include "data/nonzero_scan.hpp"

#include <vector>

#include "data/parallel.hpp"

namespace edgewise::gnn {

void append_nonzero_rows(const float* data, int64_t num_rows, int64_t cols, CsrMatrix& m, bool parallel) {
  if (num_rows <= 0) return;
  parallel = parallel && num_rows * cols >= kMinParallelWork;
  const size_t first = m.offsets.size() - 1;  // index of the first appended row
  m.offsets.resize(first + 1 + static_cast<size_t>(num_rows));
  int64_t* off = m.offsets.data() + first;  // off[0] = nnz before these rows
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < num_rows; ++r) off[r + 1] = count_nonzeros(data + r * cols, cols);
  for (int64_t r = 0; r < num_rows; ++r) off[r + 1] += off[r];
  m.indices.resize(static_cast<size_t>(off[num_rows]));
  m.values.resize(static_cast<size_t>(off[num_rows]));
  int32_t* idx = m.indices.data();
  float* val = m.values.data();
  // Each row writes only [off[r], off[r+1]): no two iterations touch the same entry.
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t r = 0; r < num_rows; ++r) write_nonzeros(data + r * cols, cols, idx + off[r], val + off[r]);
}

}  // namespace edgewise::gnn
