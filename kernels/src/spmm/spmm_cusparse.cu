// spmm sum through cuSPARSE: cusparseSpMM with A = the CSR [S, N] (values = the edge
// weights, or ones) and B = x [N, C], C = out [S, C], both dense row-major.
//
// cuSPARSE is told one index type for row offsets and column indices alike, so int32
// indices come with an int32 copy of the offsets (E < 2^31), int64 indices with the
// offsets as they are. Unweighted graphs and weight_ids need a values array, built in
// scratch. The algorithm is CUSPARSE_SPMM_ALG_DEFAULT (cuSPARSE picks); cuSPARSE does
// not promise bitwise-reproducible results for every algorithm and version, so this
// path is documented as not reproducible. Whether it beats the native kernel is a
// question for a GPU measurement (SpmmAlgorithm::Auto stays Native until then).
#include <cusparse.h>

#include <cstdint>
#include <limits>
#include <map>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/lazy_library.hpp"
#include "spmm/spmm_backends.hpp"

// cuSPARSE is opened on first use (lazy_library.hpp), not linked.
#define EW_CUSPARSE(name) EW_LAZY_FUNCTION(EW_CUSPARSE_SONAME, EW_CUSPARSE_PATH, name)

// Every cuSPARSE call goes through this: failures throw edgewise::CudaError naming
// file, line, statement and cuSPARSE's error.
#define EW_CUSPARSE_CHECK(expr)                                                                      \
  do {                                                                                               \
    cusparseStatus_t ew_status_ = (expr);                                                            \
    if (ew_status_ != CUSPARSE_STATUS_SUCCESS) {                                                     \
      throw ::edgewise::CudaError(::edgewise::detail::concat(__FILE__, ":", __LINE__, ": ", #expr,  \
                                                             " failed: ", EW_CUSPARSE(cusparseGetErrorName)(ew_status_), \
                                                             " (", EW_CUSPARSE(cusparseGetErrorString)(ew_status_), ")")); \
    }                                                                                                \
  } while (0)

namespace edgewise::spmm_detail {

namespace {

// cuSPARSE handles, one per device per host thread (a handle is not for concurrent use),
// created on first use and destroyed when the thread exits — unless the CUDA runtime is
// already unloading (process exit), when the driver reclaims them anyway.
class HandleCache {
 public:
  HandleCache() = default;
  HandleCache(const HandleCache&) = delete;
  HandleCache& operator=(const HandleCache&) = delete;
  ~HandleCache() {
    int current = 0;
    if (cudaGetDevice(&current) == cudaErrorCudartUnloading) return;
    for (auto& [device, handle] : handles_) {
      if (cudaSetDevice(device) == cudaSuccess) (void)EW_CUSPARSE(cusparseDestroy)(handle);
    }
    (void)cudaSetDevice(current);
    (void)cudaGetLastError();
  }

  cusparseHandle_t get(int device) {
    auto it = handles_.find(device);
    if (it != handles_.end()) return it->second;
    cusparseHandle_t handle = nullptr;
    EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseCreate)(&handle));
    handles_.emplace(device, handle);
    return handle;
  }

 private:
  std::map<int, cusparseHandle_t> handles_;
};

cusparseHandle_t cusparse_handle(int device) {
  thread_local HandleCache cache;
  return cache.get(device);
}

// RAII for the descriptors of one call.
struct Descriptors {
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnMatDescr_t b = nullptr;
  cusparseDnMatDescr_t c = nullptr;
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() { reset(); }
  void reset() {
    if (a != nullptr) (void)EW_CUSPARSE(cusparseDestroySpMat)(a);
    if (b != nullptr) (void)EW_CUSPARSE(cusparseDestroyDnMat)(b);
    if (c != nullptr) (void)EW_CUSPARSE(cusparseDestroyDnMat)(c);
    a = nullptr;
    b = nullptr;
    c = nullptr;
  }
};

// values[e] = the edge's coefficient (its weight, through weight_ids; 1 without weights).
template <class T, class I>
__global__ void edge_values_kernel(GatherRows<T, I> source, int64_t edges, T* __restrict__ values) {
  for (int64_t e = detail::grid_thread_index(); e < edges; e += detail::grid_thread_count()) {
    values[e] = source.template edge<true>(e).coef;
  }
}

__global__ void offsets_to_int32_kernel(const int64_t* __restrict__ offsets, int64_t count, int32_t* __restrict__ out) {
  for (int64_t i = detail::grid_thread_index(); i < count; i += detail::grid_thread_count()) {
    out[i] = static_cast<int32_t>(offsets[i]);
  }
}

}  // namespace

template <class T, class I>
void spmm_cusparse(const GatherRows<T, I>& source, const RowsOut<T>& dest, int64_t source_rows, Context& ctx) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "the cuSPARSE path is float32 or float64");
  constexpr cudaDataType kValueType = std::is_same_v<T, double> ? CUDA_R_64F : CUDA_R_32F;
  constexpr bool k32 = sizeof(I) == 4;
  const int64_t S = dest.rows, C = dest.cols, E = dest.edges, N = source_rows;
  if (E == 0) {  // nothing to multiply: the native kernel writes the zeros
    gather_reduce_cuda(source, dest, ReduceOp::Sum, ctx);
    return;
  }
  EW_REQUIRE(!k32 || E <= std::numeric_limits<int32_t>::max(), "spmm: algorithm CuSparse with int32 indices needs ",
             "fewer than 2^31 edges (E is ", E, "); pass int64 indices");
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  cusparseHandle_t handle = cusparse_handle(ctx.device().index);
  EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseSetStream)(handle, stream));

  const EdgeScale<T>& scale = source.scale;
  const bool direct_values = scale.weights != nullptr && scale.weight_ids == nullptr && scale.degree_offsets == nullptr;
  ScratchLayout layout;
  const size_t offsets_at = layout.add<int32_t>(k32 ? S + 1 : 0);
  const size_t values_at = layout.add<T>(direct_values ? 0 : E);
  const size_t fixed_bytes = layout.bytes();
  const cusparseIndexType_t index_type = k32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  const T alpha = T(1), beta = T(0);

  Descriptors d;
  auto describe = [&](void* base) {
    d.reset();
    const void* row_offsets = k32 ? static_cast<const void*>(ScratchLayout::at<int32_t>(base, offsets_at))
                                  : static_cast<const void*>(dest.offsets);
    const void* values = direct_values ? static_cast<const void*>(scale.weights)
                                       : static_cast<const void*>(ScratchLayout::at<T>(base, values_at));
    EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseCreateConstCsr)(&d.a, S, N, E, row_offsets, source.indices, values, index_type,
                                             index_type, CUSPARSE_INDEX_BASE_ZERO, kValueType));
    EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseCreateConstDnMat)(&d.b, N, C, C, source.x, kValueType, CUSPARSE_ORDER_ROW));
    EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseCreateDnMat)(&d.c, S, C, C, dest.out, kValueType, CUSPARSE_ORDER_ROW));
  };

  // The workspace size depends on the descriptors, whose pointers depend on the scratch:
  // describe, query, grow the scratch, and describe again if it moved.
  void* base = ctx.scratch(fixed_bytes);
  describe(base);
  size_t work_bytes = 0;
  EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseSpMM_bufferSize)(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                            &alpha, d.a, d.b, &beta, d.c, kValueType, CUSPARSE_SPMM_ALG_DEFAULT,
                                            &work_bytes));
  const size_t work_at = layout.add<std::byte>(static_cast<int64_t>(work_bytes));
  void* grown = ctx.scratch(layout.bytes());
  if (grown != base) {
    base = grown;
    describe(base);
  }

  if (k32) {
    offsets_to_int32_kernel<<<detail::grid_size(S + 1, detail::kBlock), detail::kBlock, 0, stream>>>(
        dest.offsets, S + 1, ScratchLayout::at<int32_t>(base, offsets_at));
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  if (!direct_values) {
    edge_values_kernel<T, I><<<detail::grid_size(E, detail::kBlock), detail::kBlock, 0, stream>>>(
        source, E, ScratchLayout::at<T>(base, values_at));
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  EW_CUSPARSE_CHECK(EW_CUSPARSE(cusparseSpMM)(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha,
                                 d.a, d.b, &beta, d.c, kValueType, CUSPARSE_SPMM_ALG_DEFAULT,
                                 work_bytes > 0 ? ScratchLayout::at<std::byte>(base, work_at) : nullptr));
}

template void spmm_cusparse<float, int32_t>(const GatherRows<float, int32_t>&, const RowsOut<float>&, int64_t,
                                            Context&);
template void spmm_cusparse<float, int64_t>(const GatherRows<float, int64_t>&, const RowsOut<float>&, int64_t,
                                            Context&);
template void spmm_cusparse<double, int32_t>(const GatherRows<double, int32_t>&, const RowsOut<double>&, int64_t,
                                             Context&);
template void spmm_cusparse<double, int64_t>(const GatherRows<double, int64_t>&, const RowsOut<double>&, int64_t,
                                             Context&);

}  // namespace edgewise::spmm_detail
