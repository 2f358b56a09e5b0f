// segment_matmul / grouped_matmul backend entry points (inputs already validated by
// segment_matmul.cpp): both ops become one list of row-major products.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "cpu_isa/dispatch.hpp"
#include "edgewise/kernels/common/context.hpp"

namespace edgewise::segment_matmul_detail {

// c [m, n] = op(a) @ op(b), all row-major and dense: op(a) is a [m, k] (stored [k, m]
// when trans_a), op(b) is b [k, n] (stored [n, k] when trans_b). k == 0 writes zeros.
template <class T>
struct Gemm {
  const T* a = nullptr;
  const T* b = nullptr;
  T* c = nullptr;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  bool trans_a = false;
  bool trans_b = false;
};

// The CPU driver, one copy per ISA level (float and BFloat16; double: baseline only)
// (segment_matmul_cpu.cpp; cpu_isa/dispatch.hpp).
EW_DECLARE_PER_CPU_ISA(
    template <class T>
    void grouped_gemm_cpu(std::span<const Gemm<T>> gemms);)

template <class T>
void grouped_gemm_cpu(std::span<const Gemm<T>> gemms) {
  EW_DISPATCH_CPU_ISA_IF((kIsaDispatchedElement<T> || std::is_same_v<T, BFloat16>), grouped_gemm_cpu, gemms);
}

// One grouped cuBLAS call on ctx's stream (segment_matmul_cuda.cu).
template <class T>
void grouped_gemm_cuda(std::span<const Gemm<T>> gemms, Context& ctx);

}  // namespace edgewise::segment_matmul_detail
