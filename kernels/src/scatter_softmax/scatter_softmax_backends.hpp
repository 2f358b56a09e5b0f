// scatter_softmax's elementwise passes per device (scatter_softmax.cpp runs the group
// reductions with scatter_reduce between them).
#pragma once

#include <cstdint>

#include "common/row_groups.hpp"
#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/scatter_softmax.hpp"

namespace edgewise::scatter_softmax_detail {

// The CPU passes, one copy per ISA level (float and the 16-bit floats; double: baseline only)
// (scatter_softmax_cpu.cpp; cpu_isa/dispatch.hpp):
// values and out are [M, C] with groups [S, C], or with `transposed` [C, M] and [C, S].
//  exponentials: out[r, c] = exp(values[r, c] - group_max[index[r], c]); with nan_as_zero
//    a NaN exponential (x - max of -inf - -inf) is written as 0.
//  logsumexp_finalise: out[i] = logsumexp_value(group_max[i], group_sum[i]) for n entries.
//  normalise, Softmax: out[r, c] /= group_sum[index[r], c]. LogSoftmax: group_sum becomes
//    log(group_sum + eps) (once per group), then out[r, c] = (values[r, c] -
//    group_max[index[r], c]) - group_sum[index[r], c].
EW_DECLARE_PER_CPU_ISA(
    template <class T, class I>
    void exponentials_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                          bool nan_as_zero, const T* group_max, T* out);
    template <class T>
    void logsumexp_finalise_cpu(const T* group_max, const T* group_sum, int64_t n, double eps, T* out);
    template <class T, class I>
    void normalise_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                       const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out);
    template <class T, class I>
    void grouped_softmax_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, SoftmaxKind kind,
                             bool logsumexp, double eps, T* out);)

template <class T, class I>
void exponentials_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                      bool nan_as_zero, const T* group_max, T* out) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, exponentials_cpu, values, index, M, C, S, transposed, nan_as_zero,
                         group_max, out);
}
template <class T>
void logsumexp_finalise_cpu(const T* group_max, const T* group_sum, int64_t n, double eps, T* out) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, logsumexp_finalise_cpu, group_max, group_sum, n, eps, out);
}
template <class T, class I>
void normalise_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                   const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, normalise_cpu, values, index, M, C, S, transposed, group_max,
                         group_sum, kind, eps, out);
}

// Row-major values only: the whole (log-)softmax or logsumexp (out [S, C]) with the rows
// grouped by index first, every group done in one visit by one thread. M < 2^32.
template <class T, class I>
void grouped_softmax_cpu(const T* values, const I* index, int64_t M, int64_t C, int64_t S, SoftmaxKind kind,
                         bool logsumexp, double eps, T* out) {
  EW_DISPATCH_CPU_ISA_IF(kIsaDispatchedScatterElement<T>, grouped_softmax_cpu, values, index, M, C, S, kind, logsumexp,
                         eps, out);
}

// Whether the grouped pass beats the passes over the [S, C] group max and sum.
// Measured (M = 10^6, 2-core AMD EPYC): at C = 64, S = 10^5 in float32 (group arrays
// 51 MB) grouped took 82-95 / 74-80 / 63-74 ms (softmax / log / logsumexp) against
// 110 / 142 / 102; in bfloat16 (26 MB) and at C = 16 or S = 10^4 it was as fast or slower.
inline bool grouped_softmax_pays(int64_t M, int64_t C, int64_t S, int64_t element_bytes) {
  return row_groups_detail::grouping_pays(
      M, 2.0 * static_cast<double>(S) * static_cast<double>(C) * static_cast<double>(element_bytes));
}

// The same passes on CUDA (scatter_softmax_cuda.cu).
template <class T, class I>
void exponentials_cuda(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                       bool nan_as_zero, const T* group_max, T* out, Context& ctx);
template <class T>
void logsumexp_finalise_cuda(const T* group_max, const T* group_sum, int64_t n, double eps, T* out, Context& ctx);
template <class T, class I>
void normalise_cuda(const T* values, const I* index, int64_t M, int64_t C, int64_t S, bool transposed,
                    const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out, Context& ctx);

}  // namespace edgewise::scatter_softmax_detail
