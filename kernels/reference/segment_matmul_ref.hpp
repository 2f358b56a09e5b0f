// Sequential oracles for segment_matmul, its weight gradient and grouped products, in
// double: one row (or one weight element) at a time, never optimised. Each also
// returns the sum of |terms| per output element, the scale of its rounding error.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace edgewise::reference {

struct ProductRef {
  std::vector<double> value;
  std::vector<double> scale;  // sum of |a * b| over the terms of each element
};

// c [m, n] = op(a) @ op(b), row-major; a stored [m, k] ([k, m] when trans_a), b stored
// [k, n] ([n, k] when trans_b).
template <class T>
ProductRef matmul_ref(const T* a, const T* b, int64_t m, int64_t n, int64_t k, bool trans_a, bool trans_b) {
  ProductRef r{std::vector<double>(static_cast<size_t>(m * n), 0.0), std::vector<double>(static_cast<size_t>(m * n), 0.0)};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double av = static_cast<double>(trans_a ? a[p * m + i] : a[i * k + p]);
        const double bv = static_cast<double>(trans_b ? b[j * k + p] : b[p * n + j]);
        acc += av * bv;
        mag += std::fabs(av * bv);
      }
      r.value[static_cast<size_t>(i * n + j)] = acc;
      r.scale[static_cast<size_t>(i * n + j)] = mag;
    }
  }
  return r;
}

// out[r] = x[r] @ weight[t] (x [N, K], weight [T*K, M]; transpose_weight: [T*M, K]).
template <class T>
ProductRef segment_matmul_ref(const std::vector<int64_t>& ptr, const std::vector<T>& x, int64_t K,
                              const std::vector<T>& weight, int64_t M, bool transpose_weight) {
  ProductRef out;
  for (size_t t = 0; t + 1 < ptr.size(); ++t) {
    const int64_t rows = ptr[t + 1] - ptr[t];
    const auto part = matmul_ref(x.data() + ptr[t] * K, weight.data() + static_cast<int64_t>(t) * K * M, rows, M, K,
                                 false, transpose_weight);
    out.value.insert(out.value.end(), part.value.begin(), part.value.end());
    out.scale.insert(out.scale.end(), part.scale.begin(), part.scale.end());
  }
  return out;
}

// grad_weight[t] = x[seg t]^T @ grad[seg t]  ([T*K, M]).
template <class T>
ProductRef segment_matmul_weight_grad_ref(const std::vector<int64_t>& ptr, const std::vector<T>& x, int64_t K,
                                          const std::vector<T>& grad, int64_t M) {
  ProductRef out;
  for (size_t t = 0; t + 1 < ptr.size(); ++t) {
    const int64_t rows = ptr[t + 1] - ptr[t];
    const auto part = matmul_ref(x.data() + ptr[t] * K, grad.data() + ptr[t] * M, K, M, rows, true, false);
    out.value.insert(out.value.end(), part.value.begin(), part.value.end());
    out.scale.insert(out.scale.end(), part.scale.begin(), part.scale.end());
  }
  return out;
}

}  // namespace edgewise::reference
