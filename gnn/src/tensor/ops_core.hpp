// Per-element math of the dense ops, written once (EW_HD) and run by both the
// CPU loops (ops_cpu.cpp) and the CUDA kernels (ops_cuda.cu).
#pragma once

#include <cmath>
#include <cstdint>

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::gnn::ops::core {

EW_HD_INLINE float relu(float x) { return x > 0.0f ? x : 0.0f; }
EW_HD_INLINE float relu_grad(float y, float g) { return y > 0.0f ? g : 0.0f; }

// Numerically stable log(1 + exp(-|x|)) + max(x, 0) - x * t: BCE with logits.
EW_HD_INLINE float bce_with_logits(float x, float t) {
  const float ax = x < 0.0f ? -x : x;
  return (x > 0.0f ? x : 0.0f) - x * t + log1pf(expf(-ax));
}
EW_HD_INLINE float sigmoid(float x) {
  return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
}

// One Adam/AdamW step for one parameter element; returns the new value.
EW_HD_INLINE float adam(float p, float g, float& m, float& v, const AdamStep& s, float bias1, float bias2) {
  if (s.weight_decay != 0.0f) {
    if (s.decoupled) {
      p -= s.lr * s.weight_decay * p;
    } else {
      g += s.weight_decay * p;
    }
  }
  m = s.beta1 * m + (1.0f - s.beta1) * g;
  v = s.beta2 * v + (1.0f - s.beta2) * g * g;
  const float m_hat = m / bias1;
  const float v_hat = v / bias2;
  return p - s.lr * m_hat / (sqrtf(v_hat) + s.eps);
}

// One SGD step (PyTorch semantics: momentum buffer starts as the first gradient).
EW_HD_INLINE float sgd(float p, float g, float& buf, const SgdStep& s) {
  if (s.weight_decay != 0.0f) g += s.weight_decay * p;
  if (s.momentum != 0.0f) {
    buf = s.first ? g : s.momentum * buf + (1.0f - s.dampening) * g;
    g = s.nesterov ? g + s.momentum * buf : buf;
  }
  return p - s.lr * g;
}

}  // namespace edgewise::gnn::ops::core
