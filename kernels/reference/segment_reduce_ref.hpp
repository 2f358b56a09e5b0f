// Sequential oracle for segment_reduce: obviously correct, never optimised.
// Float sums accumulate in double; `scale` (sum of |v| per output) sizes tolerances.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::reference {

template <class T>
struct ReduceResult {
  std::vector<T> out;        // [S, C]
  std::vector<int64_t> arg;  // [S, C]; -1 for empty segments (min/max only)
  std::vector<double> scale; // [S, C]; sum of |v| (sum), mean of |v| (mean), see each op's oracle
};

// sum / mean of column c over `rows`: floats in long double, integers wrapping like
// the library's 64-bit accumulators.
template <class T>
void reduce_sum_or_mean(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& rows, int64_t c,
                        ReduceOp op, T& out, double& scale) {
  long double fsum = 0;  // wider than every T, so a double input still has an independent oracle
  double abs_sum = 0;
  uint64_t usum = 0;  // integers: the sum modulo 2^64 (signed values as two's complement)
  for (int64_t row : rows) {
    T v = values[row * C + c];
    fsum += static_cast<long double>(v);
    abs_sum += std::fabs(static_cast<double>(v));
    if constexpr (std::is_integral_v<T>) usum += static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  const bool sum = op == ReduceOp::Sum;
  if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(sum ? fsum : fsum / static_cast<long double>(n));
    scale = sum ? abs_sum : abs_sum / static_cast<double>(n);
  } else if constexpr (std::is_signed_v<T>) {
    const auto isum = static_cast<int64_t>(usum);
    const int64_t floor_mean = isum / n - (isum % n < 0 ? 1 : 0);  // toward -inf, as torch_scatter's mean
    out = static_cast<T>(sum ? isum : floor_mean);  // C++20: wraps mod 2^32
  } else {
    out = static_cast<T>(sum ? usum : usum / static_cast<uint64_t>(n));
  }
}

// The product of column c over `rows`: floats in long double, integers modulo 2^64
// (so the 32-bit output wraps). scale = n * prod |v|, the size of a float product's
// rounding error over n factors; infinite (anything goes) when a partial product of
// the nonzero factors can leave T's range, since overflow then depends on the order
// (inf, or NaN when a 0 comes after an inf); NaN factors make it NaN either way.
template <class T>
void reduce_product(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& rows, int64_t c, T& out,
                    double& scale) {
  long double product = 1;
  long double subset_bound = 1;  // bounds |product| of any subset of the factors
  uint64_t uproduct = 1;
  for (int64_t row : rows) {
    const T v = values[row * C + c];
    product *= static_cast<long double>(v);
    subset_bound *= std::max(1.0L, std::fabs(static_cast<long double>(v)));
    if constexpr (std::is_integral_v<T>) uproduct *= static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(product);
    const long double limit = static_cast<long double>(std::numeric_limits<T>::max());
    scale = !(subset_bound <= limit) ? std::numeric_limits<double>::infinity()
                                      : static_cast<double>(rows.size()) * static_cast<double>(std::fabs(product));
  } else {
    out = static_cast<T>(uproduct);
    scale = 0;
  }
}

// Population variance (var) or PyG's std of column c over `rows`: two passes in
// long double (mean, then squared deviations), so the oracle shares nothing with
// the library's Welford update. std = sqrt(max(var, 1e-5)), 0 where that is at or
// below sqrt(1e-5) (PyG's clamp and mask, evaluated in T like torch). scale sizes
// the rounding of a float Welford fold: (1 + sqrt(n)) * maxdev * (|mean| + maxdev)
// for var, divided by 2 std for std; infinite (either side is right) when var is
// within a factor 2 of the clamp, where rounding may flip the mask.
template <class T>
void reduce_moments(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& rows, int64_t c,
                    ReduceOp op, T& out, double& scale) {
  long double sum = 0;
  for (int64_t row : rows) sum += static_cast<long double>(values[row * C + c]);
  const long double n = static_cast<long double>(rows.size());
  const long double mean = sum / n;
  long double squares = 0, max_dev = 0;
  for (int64_t row : rows) {
    const long double d = static_cast<long double>(values[row * C + c]) - mean;
    squares += d * d;
    max_dev = std::max(max_dev, std::fabs(d));
  }
  const long double var = squares / n;
  const double var_scale =
      static_cast<double>((1 + std::sqrt(n)) * max_dev * (std::fabs(mean) + max_dev));
  if (op == ReduceOp::Var) {
    out = static_cast<T>(var);
    scale = var_scale;
    return;
  }
  const T clamped = static_cast<T>(var) < T(1e-5) ? T(1e-5) : static_cast<T>(var);
  const T s = std::sqrt(clamped);
  out = s <= T(0.0031622776601683794) ? T(0) : s;
  const bool near_clamp = var > 0.5e-5L && var < 2e-5L;
  scale = near_clamp ? std::numeric_limits<double>::infinity()
                     : (out == T(0) ? 0.0 : var_scale / (2.0 * static_cast<double>(out)));
}

// min / max of column c over `rows`: the first strictly better element wins; NaN
// beats every number.
template <class T>
void reduce_extremum(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& rows, int64_t c,
                     ReduceOp op, T& out, int64_t& arg) {
  int64_t best = rows[0];
  for (int64_t row : rows) {
    T v = values[row * C + c];
    T b = values[best * C + c];
    bool v_nan = v != v, b_nan = b != b;
    bool better = op == ReduceOp::Max ? (v > b) : (v < b);
    if ((v_nan && !b_nan) || (!b_nan && better)) best = row;
  }
  out = values[best * C + c];
  arg = best;
}

// Reduces `rows_of[s]` (the rows of output s, in increasing order) of values [M, C].
template <class T>
ReduceResult<T> reduce_rows_ref(const std::vector<T>& values, int64_t C,
                                const std::vector<std::vector<int64_t>>& rows_of, ReduceOp op) {
  const int64_t S = static_cast<int64_t>(rows_of.size());
  ReduceResult<T> r{std::vector<T>(S * C), std::vector<int64_t>(S * C, -1), std::vector<double>(S * C, 0.0)};
  for (int64_t s = 0; s < S; ++s) {
    const auto& rows = rows_of[s];
    for (int64_t c = 0; c < C; ++c) {
      const int64_t o = s * C + c;
      if (rows.empty()) {
        r.out[o] = T(op == ReduceOp::Mul ? 1 : 0);  // the empty product is 1 (torch_scatter)
        continue;
      }
      switch (op) {  // no default: an op missing here is a compile error (-Wswitch)
        case ReduceOp::Sum:
        case ReduceOp::Mean: reduce_sum_or_mean(values, C, rows, c, op, r.out[o], r.scale[o]); break;
        case ReduceOp::Min:
        case ReduceOp::Max: reduce_extremum(values, C, rows, c, op, r.out[o], r.arg[o]); break;
        case ReduceOp::Mul: reduce_product(values, C, rows, c, r.out[o], r.scale[o]); break;
        case ReduceOp::Var:
        case ReduceOp::Std:
          if constexpr (std::is_floating_point_v<T>) reduce_moments(values, C, rows, c, op, r.out[o], r.scale[o]);
          break;  // integers: not defined (the library rejects them)
      }
    }
  }
  return r;
}

// values [M, C], offsets [S+1].
template <class T>
ReduceResult<T> segment_reduce_ref(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& offsets,
                                   ReduceOp op) {
  std::vector<std::vector<int64_t>> rows_of(offsets.size() - 1);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) rows_of[s].push_back(r);
  }
  return reduce_rows_ref(values, C, rows_of, op);
}

}  // namespace edgewise::reference
