#include "data/finite_scan.hpp"

#include <algorithm>
#include <cmath>

#include "data/parallel.hpp"

namespace edgewise::gnn {

namespace {
// The smallest i in [0, n) with values[i] not finite, or n (a min reduction, so
// the answer does not depend on the thread count).
int64_t first_nonfinite_index(const float* values, int64_t n) {
  int64_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static) if (n >= kMinParallelWork)
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i]) && i < first) first = i;
  }
  return first;
}
}  // namespace

std::optional<FeaturePosition> first_nonfinite(const Features& f) {
  if (f.is_sparse()) {
    const CsrMatrix& m = f.csr;
    const int64_t nnz = static_cast<int64_t>(m.values.size());
    const int64_t k = first_nonfinite_index(m.values.data(), nnz);
    if (k == nnz) return std::nullopt;
    // The row holding stored entry k: the last offset <= k.
    const auto row = std::upper_bound(m.offsets.begin(), m.offsets.end(), k) - m.offsets.begin() - 1;
    return FeaturePosition{static_cast<int64_t>(row), m.indices[static_cast<size_t>(k)], m.values[static_cast<size_t>(k)]};
  }
  const int64_t n = static_cast<int64_t>(f.dense.size());
  const int64_t i = first_nonfinite_index(f.dense.data(), n);
  if (i == n) return std::nullopt;
  return FeaturePosition{i / f.cols, i % f.cols, f.dense[static_cast<size_t>(i)]};
}

}  // namespace edgewise::gnn
