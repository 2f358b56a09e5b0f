// Attention activations on the CPU: one parallel elementwise loop per call.
#include "tensor/activations_backends.hpp"
#include "tensor/activations_core.hpp"

namespace edgewise::gnn::ops::cpu {

namespace {
constexpr int64_t kParallelMin = int64_t{1} << 15;
}

void activation(Activation kind, float param, const Tensor& x, Tensor& y) {
  const float* xs = x.data();
  float* ys = y.data();
  const int64_t n = x.numel();
  if (kind == Activation::LeakyRelu) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) ys[i] = core::leaky_relu(xs[i], param);
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) ys[i] = core::elu(xs[i], param);
  }
}

void activation_backward(Activation kind, float param, const Tensor& x, const Tensor& grad_y, Tensor& grad_x) {
  const float* xs = x.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
  const int64_t n = x.numel();
  if (kind == Activation::LeakyRelu) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) out[i] = core::leaky_relu_grad(xs[i], gs[i], param);
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
    for (int64_t i = 0; i < n; ++i) out[i] = core::elu_grad(xs[i], gs[i], param);
  }
}

}  // namespace edgewise::gnn::ops::cpu
