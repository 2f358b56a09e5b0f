// EW_CUDA_CHECK: every CUDA runtime call goes through it; failures throw
// edgewise::CudaError naming file, line and statement (a library never exits).
// Public for code built on the kernels that calls the CUDA runtime itself (the
// engine's own kernels, extensions); include it only from translation units that
// see the CUDA Toolkit headers.
#pragma once

#include <cuda_runtime_api.h>

#include "edgewise/kernels/common/check.hpp"

#define EW_CUDA_CHECK(expr)                                                                  \
  do {                                                                                       \
    cudaError_t ew_status_ = (expr);                                                         \
    if (ew_status_ != cudaSuccess) {                                                         \
      (void)cudaGetLastError(); /* clear a sticky non-fatal error */                        \
      throw ::edgewise::CudaError(::edgewise::detail::concat(                                \
          __FILE__, ":", __LINE__, ": ", #expr, " failed: ", cudaGetErrorName(ew_status_), \
          " (", cudaGetErrorString(ew_status_), ")"));                                       \
    }                                                                                        \
  } while (0)

// After every kernel launch; with EW_DEBUG_SYNC also wait for the kernel, so an
// asynchronous fault is reported at the launch that caused it.
#if defined(EW_DEBUG_SYNC)
#define EW_CUDA_CHECK_LAUNCH(stream)            \
  do {                                          \
    EW_CUDA_CHECK(cudaPeekAtLastError());       \
    EW_CUDA_CHECK(cudaStreamSynchronize(stream)); \
  } while (0)
#else
#define EW_CUDA_CHECK_LAUNCH(stream) EW_CUDA_CHECK(cudaPeekAtLastError())
#endif
