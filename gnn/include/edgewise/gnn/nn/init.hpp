// Parameter initialisation as PyTorch Geometric does it, drawn from seeded Philox
// streams (the same values on every device).
#pragma once

#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn::init {

// U(-a, a) with a = sqrt(6 / (fan_in + fan_out)) for a [fan_in, fan_out] weight (PyG `glorot`).
Tensor glorot_uniform(int64_t fan_in, int64_t fan_out, Generator& generator, Device device = Device::cpu());
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) of shape [rows, cols] — torch.nn.Linear's default
// (kaiming_uniform with a = sqrt(5)) for weights and biases, which PyG's Linear keeps.
Tensor linear_default(int64_t fan_in, int64_t rows, int64_t cols, Generator& generator,
                      Device device = Device::cpu());
// U(lo, hi) of shape [rows, cols].
Tensor uniform(int64_t rows, int64_t cols, float lo, float hi, Generator& generator, Device device = Device::cpu());

}  // namespace edgewise::gnn::init
