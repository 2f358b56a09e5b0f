// CsrMatrix: a host float matrix in compressed sparse row form (sparse node features).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "edgewise/kernels/common/view.hpp"

namespace edgewise::gnn {

// Sizes: `rows` x `cols` logical matrix, nnz stored entries.
//
// offsets [rows + 1] int64: offsets[0] == 0, nondecreasing, offsets[rows] == nnz;
//                    row r owns entries [offsets[r], offsets[r+1]).
// indices [nnz]      int32 column of each entry, strictly ascending within a row,
//                    in [0, cols) (so cols <= 2^31 - 1).
// values  [nnz]      float value of each entry.
//
// "Zero" means == 0.0f (so -0.0 too): from_dense() stores exactly the entries
// that compare unequal to zero, NaN included; to_dense() writes 0 elsewhere.
struct CsrMatrix {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> indices;
  std::vector<float> values;

  int64_t nnz() const { return static_cast<int64_t>(indices.size()); }
  // nnz / (rows * cols); 0 for an empty shape.
  double density() const;

  // The nonzeros of a dense row-major CPU matrix (parallel, two passes).
  // Throws std::invalid_argument when dense.cols exceeds the int32 column range
  // or the view is not on the CPU.
  static CsrMatrix from_dense(MatrixView<const float> dense);
  // The dense row-major [rows * cols] copy.
  std::vector<float> to_dense() const;

  // Checks every sentence of the contract above; throws std::invalid_argument
  // whose message starts with `what` and names the first bad position.
  void validate(const std::string& what = "CsrMatrix") const;
};

// Fraction of entries of a dense CPU matrix that compare unequal to 0 (NaN counts
// as nonzero); 0 for an empty shape.
double density(MatrixView<const float> dense);

}  // namespace edgewise::gnn
