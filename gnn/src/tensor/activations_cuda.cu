// Attention activations on CUDA: grid-stride elementwise kernels over the shared core,
// on the engine's stream for the device.
#include <cuda_runtime.h>

#include "edgewise/kernels/common/cuda_check.hpp"
#include "tensor/activations_backends.hpp"
#include "tensor/activations_core.hpp"
#include "tensor/for_each_cuda.cuh"

namespace edgewise::gnn::ops::cuda {

namespace {

using gnn::cuda_launch::grid_size;
using gnn::cuda_launch::grid_thread_count;
using gnn::cuda_launch::grid_thread_index;
using gnn::cuda_launch::kBlock;
using gnn::cuda_launch::on_device;

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
  const cudaStream_t stream = on_device(x.device());
  activation_kernel<<<grid_size(n), kBlock, 0, stream>>>(kind, param, x.data(), n, y.data());
  EW_CUDA_CHECK_LAUNCH(stream);
}

void activation_backward(Activation kind, float param, const Tensor& x, const Tensor& grad_y, Tensor& grad_x) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const cudaStream_t stream = on_device(x.device());
  activation_backward_kernel<<<grid_size(n), kBlock, 0, stream>>>(kind, param, x.data(), grad_y.data(), n,
                                                                   grad_x.data());
  EW_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace edgewise::gnn::ops::cuda
