// scatter_softmax's per-element math, shared by the CPU and CUDA passes (EW_HD).
#pragma once

#include <cmath>
#include <type_traits>

#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/common/half.hpp"

namespace edgewise::scatter_softmax_detail {

// The type the passes compute in: double for double, float otherwise.
template <class T>
using Compute = std::conditional_t<std::is_same_v<T, double>, double, float>;

// log(z + eps) of a group's sum z, computed once per group.
template <class T>
EW_HD_INLINE T log_of_sum(T group_sum, double eps) {
  using F = Compute<T>;
  return T(std::log(static_cast<F>(group_sum) + static_cast<F>(eps)));
}

// The log-softmax output: (x - max) - log(z + eps).
template <class T>
EW_HD_INLINE T log_softmax_value(T value, T group_max, T group_log_sum) {
  using F = Compute<T>;
  return T((static_cast<F>(value) - static_cast<F>(group_max)) - static_cast<F>(group_log_sum));
}

template <class T>
EW_HD_INLINE T softmax_value(T exponential, T group_sum) {
  using F = Compute<T>;
  return T(static_cast<F>(exponential) / static_cast<F>(group_sum));
}

// logsumexp of a group from its max and its sum of exp(x - max) (torch_scatter 2.1.2):
// log(sum + eps) + max, 0 for a group whose sum is 0 (empty, or all -inf), NaN for a
// group with a NaN (its max; its exponentials all counted as 0).
template <class T>
EW_HD_INLINE T logsumexp_value(T group_max, T group_sum, double eps) {
  using F = Compute<T>;
  const F sum = static_cast<F>(group_sum), max = static_cast<F>(group_max);
  return sum == F(0) && max == max ? T(0.0f) : T(std::log(sum + static_cast<F>(eps)) + max);
}

}  // namespace edgewise::scatter_softmax_detail
