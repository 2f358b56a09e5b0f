// Elementwise math of the attention activations, shared by the CPU and CUDA drivers.
#pragma once

#include <cmath>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::gnn::ops::core {

EW_HD_INLINE float leaky_relu(float x, float slope) { return x > 0.0f ? x : slope * x; }
// From the input: the slope of x itself (the output's sign equals x's only for slope > 0).
EW_HD_INLINE float leaky_relu_grad(float x, float g, float slope) { return x > 0.0f ? g : slope * g; }

EW_HD_INLINE float elu(float x, float alpha) { return x > 0.0f ? x : alpha * expm1f(x); }
EW_HD_INLINE float elu_grad(float x, float g, float alpha) { return x > 0.0f ? g : g * alpha * expf(x); }

}  // namespace edgewise::gnn::ops::core
