// Sequential oracle for the reduction backward (segment_reduce_backward,
// scatter_reduce_backward, spmm_full_backward): the gradient of every element from
// the rules written out here in long double, with the mean in two passes, sharing
// nothing with the library's traits. Obviously correct, never optimised.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "edgewise/kernels/common/reduce_op.hpp"

namespace edgewise::reference {

// rows_of[s]: the element rows of output s; out / arg / grad_out [S, C] (arg: the
// forward's, min/max under TieRule::First; the split rules share among the rows equal
// to out, NaN equal to NaN, one more share at a zero output under SplitWithZeroBase). Returns the element gradients [M, C] in double.
template <class T>
std::vector<double> reduce_backward_ref(const std::vector<T>& values, int64_t C,
                                        const std::vector<std::vector<int64_t>>& rows_of, int64_t M, ReduceOp op,
                                        const std::vector<T>& out, const std::vector<int64_t>& arg,
                                        const std::vector<T>& grad_out, TieRule tie_rule = TieRule::First) {
  std::vector<double> grad(static_cast<size_t>(M * C), 0.0);
  for (size_t s = 0; s < rows_of.size(); ++s) {
    const auto& rows = rows_of[s];
    const long double n = static_cast<long double>(rows.size());
    for (int64_t c = 0; c < C; ++c) {
      const int64_t o = static_cast<int64_t>(s) * C + c;
      const long double g = grad_out[o], y = out[o];
      long double mean = 0;
      for (int64_t r : rows) mean += static_cast<long double>(values[r * C + c]);
      if (!rows.empty()) mean /= n;
      auto tied = [&](int64_t r) {
        const T m = values[r * C + c];
        return m == out[o] || (std::isnan(static_cast<double>(m)) && std::isnan(static_cast<double>(out[o])));
      };
      long double ties = 0;
      for (int64_t r : rows) ties += tied(r) ? 1 : 0;
      for (int64_t r : rows) {
        const long double m = values[r * C + c];
        long double d = 0;
        switch (op) {  // no default: an op missing here is a compile error (-Wswitch)
          case ReduceOp::Sum: d = g; break;
          case ReduceOp::Mean: d = g / n; break;
          case ReduceOp::Min:
          case ReduceOp::Max:
            if (tie_rule == TieRule::First) {
              d = arg[o] == r ? g : 0;
            } else {  // the zero-base rule also counts the zero the output started from
              const long double shares = ties + (tie_rule == TieRule::SplitWithZeroBase && y == 0 ? 1 : 0);
              d = tied(r) ? g / shares : 0;
            }
            break;
          case ReduceOp::Mul: d = g * y / m; break;
          case ReduceOp::Var: d = 2 * g * (m - mean) / n; break;
          case ReduceOp::Std: d = y == 0 ? 0 : g * (m - mean) / (n * y); break;
        }
        grad[r * C + c] = static_cast<double>(d);
      }
    }
  }
  return grad;
}

}  // namespace edgewise::reference
