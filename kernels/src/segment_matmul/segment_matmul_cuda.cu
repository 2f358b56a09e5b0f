// The CUDA driver of segment_matmul / grouped_matmul: every product in one grouped
// cuBLAS call (cublas<t>gemmGroupedBatched_64, CUDA 12.5 and later; one cublas<t>gemm
// per product before that), row-major through the transposed column-major problem.
// bfloat16 goes through the Ex forms (cublasGemmGroupedBatchedEx_64, cublasGemmEx_64)
// with float accumulation.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <map>
#include <type_traits>
#include <vector>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/lazy_library.hpp"
#include "segment_matmul/segment_matmul_backends.hpp"

#define EW_CUBLAS_CHECK(expr)                                                                          \
  do {                                                                                                 \
    cublasStatus_t ew_status_ = (expr);                                                                \
    if (ew_status_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      throw ::edgewise::CudaError(::edgewise::detail::concat(__FILE__, ":", __LINE__, ": ", #expr,    \
                                                             " failed: cuBLAS status ",               \
                                                             static_cast<int>(ew_status_)));          \
    }                                                                                                  \
  } while (0)

// cuBLAS is opened on first use (lazy_library.hpp), not linked.
#define EW_CUBLAS(name) EW_LAZY_FUNCTION(EW_CUBLAS_SONAME, EW_CUBLAS_PATH, name)

#if defined(CUBLAS_VER_MAJOR) && (CUBLAS_VER_MAJOR > 12 || (CUBLAS_VER_MAJOR == 12 && CUBLAS_VER_MINOR >= 5))
#define EW_HAVE_GROUPED_GEMM 1
#else
#define EW_HAVE_GROUPED_GEMM 0
#endif

namespace edgewise::segment_matmul_detail {

namespace {

// One handle per (thread, device), created on first use and kept for the thread's life.
cublasHandle_t handle_for(int device) {
  thread_local std::map<int, cublasHandle_t> handles;
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cublasHandle_t h = nullptr;
  EW_CUBLAS_CHECK(EW_CUBLAS(cublasCreate)(&h));
  handles.emplace(device, h);
  return h;
}

cublasOperation_t op(bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major
// matrix read column-major is its transpose: B goes first, A second, no copies. A
// row-major matrix's leading dimension is its stored column count.
template <class T>
int64_t ld_a(const Gemm<T>& g) { return g.trans_a ? g.m : g.k; }
template <class T>
int64_t ld_b(const Gemm<T>& g) { return g.trans_b ? g.k : g.n; }

}  // namespace

template <class T>
void grouped_gemm_cuda(std::span<const Gemm<T>> gemms, Context& ctx) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, BFloat16>);
  constexpr bool kBf16 = std::is_same_v<T, BFloat16>;
  using Scalar = std::conditional_t<kBf16, float, T>;  // alpha, beta and the accumulation
  const Device device = ctx.device();
  const auto stream = static_cast<cudaStream_t>(ctx.stream());
  EW_CUDA_CHECK(cudaSetDevice(device.index));  // the handle belongs to this device
  cublasHandle_t h = handle_for(device.index);
  EW_CUBLAS_CHECK(EW_CUBLAS(cublasSetStream)(h, stream));

  // Products with an empty reduction write zeros; cuBLAS gets the rest.
  std::vector<Gemm<T>> work;
  for (const Gemm<T>& g : gemms) {
    if (g.m == 0 || g.n == 0) continue;
    if (g.k == 0) {
      EW_CUDA_CHECK(cudaMemsetAsync(g.c, 0, static_cast<std::size_t>(g.m * g.n) * sizeof(T), stream));
      continue;
    }
    work.push_back(g);
  }
  if (work.empty()) return;
  const Scalar one = Scalar(1), zero = Scalar(0);

#if EW_HAVE_GROUPED_GEMM
  // One group per product (group_size 1): shapes differ from product to product.
  const std::size_t count = work.size();
  std::vector<cublasOperation_t> op_b_first(count), op_a_second(count);
  std::vector<int64_t> n_first(count), m_second(count), k(count), ldb(count), lda(count), ldc(count), sizes(count, 1);
  std::vector<Scalar> alphas(count, one), betas(count, zero);
  std::vector<const T*> b_first(count), a_second(count);
  std::vector<T*> c(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Gemm<T>& g = work[i];
    op_b_first[i] = op(g.trans_b);
    op_a_second[i] = op(g.trans_a);
    n_first[i] = g.n;
    m_second[i] = g.m;
    k[i] = g.k;
    ldb[i] = ld_b(g);
    lda[i] = ld_a(g);
    ldc[i] = g.n;
    b_first[i] = g.b;
    a_second[i] = g.a;
    c[i] = g.c;
  }
  // The pointer arrays are read by the device.
  const auto b_dev = Buffer<const T*>::from_host(b_first, device);
  const auto a_dev = Buffer<const T*>::from_host(a_second, device);
  const auto c_dev = Buffer<T*>::from_host(c, device);
  const auto groups = static_cast<int64_t>(count);
  if constexpr (kBf16) {
    EW_CUBLAS_CHECK(EW_CUBLAS(cublasGemmGroupedBatchedEx_64)(
        h, op_b_first.data(), op_a_second.data(), n_first.data(), m_second.data(), k.data(), alphas.data(),
        reinterpret_cast<const void* const*>(b_dev.data()), CUDA_R_16BF, ldb.data(),
        reinterpret_cast<const void* const*>(a_dev.data()), CUDA_R_16BF, lda.data(), betas.data(),
        reinterpret_cast<void* const*>(c_dev.data()), CUDA_R_16BF, ldc.data(), groups, sizes.data(),
        CUBLAS_COMPUTE_32F));
  } else if constexpr (std::is_same_v<T, float>) {
    EW_CUBLAS_CHECK(EW_CUBLAS(cublasSgemmGroupedBatched_64)(
        h, op_b_first.data(), op_a_second.data(), n_first.data(), m_second.data(), k.data(), alphas.data(),
        b_dev.data(), ldb.data(), a_dev.data(), lda.data(), betas.data(), c_dev.data(), ldc.data(), groups,
        sizes.data()));
  } else {
    EW_CUBLAS_CHECK(EW_CUBLAS(cublasDgemmGroupedBatched_64)(
        h, op_b_first.data(), op_a_second.data(), n_first.data(), m_second.data(), k.data(), alphas.data(),
        b_dev.data(), ldb.data(), a_dev.data(), lda.data(), betas.data(), c_dev.data(), ldc.data(), groups,
        sizes.data()));
  }
  // The pointer arrays are freed on return: the call must be done with them.
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
#else
  for (const Gemm<T>& g : work) {
    const auto n = static_cast<int>(g.n), m = static_cast<int>(g.m), kk = static_cast<int>(g.k);
    if constexpr (kBf16) {
      EW_CUBLAS_CHECK(EW_CUBLAS(cublasGemmEx_64)(h, op(g.trans_b), op(g.trans_a), n, m, kk, &one, g.b,
                                                 CUDA_R_16BF, ld_b(g), g.a, CUDA_R_16BF, ld_a(g), &zero, g.c,
                                                 CUDA_R_16BF, g.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else if constexpr (std::is_same_v<T, float>) {
      EW_CUBLAS_CHECK(EW_CUBLAS(cublasSgemm)(h, op(g.trans_b), op(g.trans_a), n, m, kk, &one, g.b,
                                             static_cast<int>(ld_b(g)), g.a, static_cast<int>(ld_a(g)), &zero, g.c, n));
    } else {
      EW_CUBLAS_CHECK(EW_CUBLAS(cublasDgemm)(h, op(g.trans_b), op(g.trans_a), n, m, kk, &one, g.b,
                                             static_cast<int>(ld_b(g)), g.a, static_cast<int>(ld_a(g)), &zero, g.c, n));
    }
  }
#endif
}

template void grouped_gemm_cuda<float>(std::span<const Gemm<float>>, Context&);
template void grouped_gemm_cuda<double>(std::span<const Gemm<double>>, Context&);
template void grouped_gemm_cuda<BFloat16>(std::span<const Gemm<BFloat16>>, Context&);

}  // namespace edgewise::segment_matmul_detail
