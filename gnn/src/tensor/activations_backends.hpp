// Per-device implementations of the attention activations (activations.cpp validates).
#pragma once

#include "edgewise/gnn/tensor/tensor.hpp"

// kind: which activation; param: the negative slope (leaky_relu) or alpha (elu).
namespace edgewise::gnn::ops {
enum class Activation : int { LeakyRelu, Elu };
}

#define EW_ACTIVATION_DECLARATIONS                                                          \
  void activation(Activation kind, float param, const Tensor& x, Tensor& y);                \
  void activation_backward(Activation kind, float param, const Tensor& x, const Tensor& grad_y, Tensor& grad_x);

namespace edgewise::gnn::ops::cpu {
EW_ACTIVATION_DECLARATIONS
}
namespace edgewise::gnn::ops::cuda {
EW_ACTIVATION_DECLARATIONS
}
#undef EW_ACTIVATION_DECLARATIONS
