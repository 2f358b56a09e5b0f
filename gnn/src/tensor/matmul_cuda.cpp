// Dense matrix products on CUDA through cuBLAS (row-major via the transposed problem).
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <map>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/cuda_check.hpp"
#include "edgewise/kernels/common/lazy_library.hpp"
#include "tensor/ops_backends.hpp"

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

namespace edgewise::gnn::ops::cuda {

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
}  // namespace

void matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c, float alpha, float beta) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major
  // matrix read column-major is its transpose: pass B first, A second, no copies.
  const int m = static_cast<int>(c.rows());
  const int n = static_cast<int>(c.cols());
  const int k = static_cast<int>(ta ? a.rows() : a.cols());
  if (m == 0 || n == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(c.device().index));  // the handle belongs to this device
  cublasHandle_t h = handle_for(c.device().index);
  // The handle is per thread and device; the stream is whichever the engine uses now.
  EW_CUBLAS_CHECK(EW_CUBLAS(cublasSetStream)(h, static_cast<cudaStream_t>(engine_stream(c.device()))));
  EW_CUBLAS_CHECK(EW_CUBLAS(cublasSgemm)(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha,
                              b.data(), static_cast<int>(b.cols()), a.data(), static_cast<int>(a.cols()), &beta,
                              c.data(), n));
}

}  // namespace edgewise::gnn::ops::cuda
