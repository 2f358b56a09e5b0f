// CsrMatrix: dense <-> CSR conversion, density, contract validation.
#include "edgewise/gnn/data/csr_matrix.hpp"

#include <limits>

#include "data/nonzero_scan.hpp"
#include "data/parallel.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

double CsrMatrix::density() const {
  const double total = static_cast<double>(rows) * static_cast<double>(cols);
  return total > 0 ? static_cast<double>(nnz()) / total : 0.0;
}

CsrMatrix CsrMatrix::from_dense(MatrixView<const float> dense) {
  EW_REQUIRE(dense.device.is_cpu(), "CsrMatrix::from_dense: dense must be on the CPU (got ", dense.device.str(), ")");
  EW_REQUIRE(dense.rows >= 0 && dense.cols >= 0, "CsrMatrix::from_dense: bad shape ", dense.rows, " x ", dense.cols);
  EW_REQUIRE(dense.cols <= std::numeric_limits<int32_t>::max(), "CsrMatrix::from_dense: cols (", dense.cols,
             ") exceeds the int32 column index range");
  CsrMatrix m;
  m.rows = dense.rows;
  m.cols = dense.cols;
  m.offsets.reserve(static_cast<size_t>(dense.rows) + 1);
  append_nonzero_rows(dense.data, dense.rows, dense.cols, m);
  return m;
}

std::vector<float> CsrMatrix::to_dense() const {
  std::vector<float> dense(static_cast<size_t>(rows * cols), 0.0f);
  // Rows are independent: each iteration writes only its own row.
#pragma omp parallel for schedule(static) if (rows * cols >= kMinParallelWork)
  for (int64_t r = 0; r < rows; ++r) {
    float* out = dense.data() + r * cols;
    for (int64_t k = offsets[static_cast<size_t>(r)]; k < offsets[static_cast<size_t>(r) + 1]; ++k)
      out[indices[static_cast<size_t>(k)]] = values[static_cast<size_t>(k)];
  }
  return dense;
}

void CsrMatrix::validate(const std::string& what) const {
  EW_REQUIRE(rows >= 0 && cols >= 0 && cols <= std::numeric_limits<int32_t>::max(), what, ": bad shape ", rows,
             " x ", cols);
  EW_REQUIRE(static_cast<int64_t>(offsets.size()) == rows + 1, what, ": offsets.size() (", offsets.size(),
             ") must equal rows + 1 (", rows + 1, ")");
  EW_REQUIRE(offsets[0] == 0, what, ": offsets[0] (", offsets[0], ") must be 0");
  EW_REQUIRE(offsets.back() == nnz(), what, ": offsets[rows] (", offsets.back(), ") must equal nnz (", nnz(), ")");
  EW_REQUIRE(values.size() == indices.size(), what, ": values.size() (", values.size(), ") must equal indices.size() (",
             indices.size(), ")");
  // Monotone offsets first: with offsets[rows] == nnz they keep every row inside the arrays.
  for (int64_t r = 0; r < rows; ++r)
    EW_REQUIRE(offsets[static_cast<size_t>(r)] <= offsets[static_cast<size_t>(r) + 1], what,
               ": offsets must be nondecreasing, but offsets[", r, "] (", offsets[static_cast<size_t>(r)],
               ") > offsets[", r + 1, "] (", offsets[static_cast<size_t>(r) + 1], ")");
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t begin = offsets[static_cast<size_t>(r)], end = offsets[static_cast<size_t>(r) + 1];
    for (int64_t k = begin; k < end; ++k) {
      const int32_t c = indices[static_cast<size_t>(k)];
      EW_REQUIRE(c >= 0 && c < cols, what, ": indices[", k, "] (", c, ") in row ", r, " must lie in [0, ", cols, ")");
      EW_REQUIRE(k == begin || indices[static_cast<size_t>(k) - 1] < c, what, ": indices of row ", r,
                 " must be strictly ascending, but indices[", k - 1, "] (", indices[static_cast<size_t>(k) - 1],
                 ") >= indices[", k, "] (", c, ")");
    }
  }
}

double density(MatrixView<const float> dense) {
  EW_REQUIRE(dense.device.is_cpu(), "density: dense must be on the CPU (got ", dense.device.str(), ")");
  const double total = static_cast<double>(dense.rows) * static_cast<double>(dense.cols);
  if (total <= 0) return 0.0;
  int64_t nnz = 0;
#pragma omp parallel for reduction(+ : nnz) schedule(static) if (dense.rows * dense.cols >= kMinParallelWork)
  for (int64_t r = 0; r < dense.rows; ++r) nnz += count_nonzeros(dense.data + r * dense.cols, dense.cols);
  return static_cast<double>(nnz) / total;
}

}  // namespace edgewise::gnn
