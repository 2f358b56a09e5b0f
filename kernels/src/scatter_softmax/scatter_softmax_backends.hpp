// scatter_softmax's elementwise passes per device (scatter_softmax.cpp runs the group
// reductions with scatter_reduce between them).
#pragma once

#include <cstdint>

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
                       const T* group_max, T* group_sum, SoftmaxKind kind, double eps, T* out);)

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
