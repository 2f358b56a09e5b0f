// Attention activations on CUDA: grid-stride elementwise kernels over the shared core.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "common/launch.cuh"
#include "ops/activations_backends.hpp"
#include "ops/activations_core.hpp"

namespace edgewise::gnn::ops::cuda {

namespace {

using edgewise::detail::grid_size;
using edgewise::detail::grid_thread_count;
using edgewise::detail::grid_thread_index;
using edgewise::detail::kBlock;

__global__ void activation_kernel(Activation kind, float param, const float* __restrict__ x, int64_t n,
                                  float* __restrict__ y) {
  for (int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    y[i] = kind == Activation::LeakyRelu ? core::leaky_relu(x[i], param) : core::elu(x[i], param);
  }
}

__global__ void activation_backward_kernel(Activation kind, float param, const float* __restrict__ x,
                                           const float* __restrict__ g, int64_t n, float* __restrict__ out) {
  for (int64_t i = grid_thread_index(); i < n; i += grid_thread_count()) {
    out[i] = kind == Activation::LeakyRelu ? core::leaky_relu_grad(x[i], g[i], param) : core::elu_grad(x[i], g[i], param);
  }
}

}  // namespace

void activation(Activation kind, float param, const Tensor& x, Tensor& y) {
  const int64_t n = x.numel();
  if (n == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(x.device().index));
  activation_kernel<<<grid_size(n, kBlock), kBlock>>>(kind, param, x.data(), n, y.data());
  EW_CUDA_CHECK_LAUNCH(nullptr);
}

void activation_backward(Activation kind, float param, const Tensor& x, const Tensor& grad_y, Tensor& grad_x) {
  const int64_t n = x.numel();
  if (n == 0) return;
  EW_CUDA_CHECK(cudaSetDevice(x.device().index));
  activation_backward_kernel<<<grid_size(n, kBlock), kBlock>>>(kind, param, x.data(), grad_y.data(), n, grad_x.data());
  EW_CUDA_CHECK_LAUNCH(nullptr);
}

}  // namespace edgewise::gnn::ops::cuda
