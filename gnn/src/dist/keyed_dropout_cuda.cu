// Keyed dropout on the GPU: one thread per element, the shared Philox mask.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "keyed_dropout_backend.hpp"
#include "edgewise/gnn/tensor/dropout_core.hpp"

namespace edgewise::gnn::dist {

namespace {
__global__ void keyed_dropout_kernel(const float* x, float* y, const int64_t* key_base, int64_t rows, int64_t cols,
                                     ops::DropoutMask mask) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const int64_t r = i / cols;
  y[i] = mask.apply(x[i], key_base[r] + (i - r * cols));
}
}  // namespace

void keyed_dropout_cuda(const float* x, float* y, const int64_t* key_base, int64_t rows, int64_t cols, float p,
                        uint64_t seed, uint64_t stream) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  keyed_dropout_kernel<<<blocks, kThreads>>>(x, y, key_base, rows, cols, ops::DropoutMask(p, seed, stream));
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string("keyed_dropout_kernel: ") + cudaGetErrorString(status));
}

}  // namespace edgewise::gnn::dist
