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
  std::vector<double> scale; // [S, C]; sum of |v| (sum), mean of |v| (mean), 0 otherwise
};

// sum / mean of column c over `rows`: floats in long double, integers wrapping like
// the library's 64-bit accumulators.
template <class T>
void reduce_sum_or_mean(const std::vector<T>& values, int64_t C, const std::vector<int64_t>& rows, int64_t c,
                        ReduceOp op, T& out, double& scale) {
  long double fsum = 0;  // wider than every T, so a double input still has an independent oracle
  double abs_sum = 0;
  int64_t isum = 0;
  uint64_t usum = 0;
  for (int64_t row : rows) {
    T v = values[row * C + c];
    fsum += static_cast<long double>(v);
    abs_sum += std::fabs(static_cast<double>(v));
    if constexpr (std::is_integral_v<T>) {
      isum += static_cast<int64_t>(v);
      usum += static_cast<uint64_t>(v);
    }
  }
  const int64_t n = static_cast<int64_t>(rows.size());
  const bool sum = op == ReduceOp::Sum;
  if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(sum ? fsum : fsum / static_cast<long double>(n));
    scale = sum ? abs_sum : abs_sum / static_cast<double>(n);
  } else if constexpr (std::is_signed_v<T>) {
    out = static_cast<T>(sum ? isum : isum / n);  // C++20: wraps mod 2^32
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
