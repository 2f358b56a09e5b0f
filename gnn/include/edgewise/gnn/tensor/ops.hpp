// Dense tensor operations the engine's layers and optimizers are built from
// (forward and backward pieces; no autograd here — see autograd.hpp). Every
// function runs on the device of its arguments (all must match) and writes its
// output tensors in place; shapes are checked first and named in errors.
#pragma once

#include <cstdint>

#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn::ops {

// c = alpha * op(a) * op(b) + beta * c, op = transpose when the flag is set
// (CPU: Eigen; CUDA: cuBLAS). c must already have the result's shape.
void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c, float alpha = 1.0f,
            float beta = 0.0f);
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);

// y = alpha * x + beta * y (elementwise; y may alias x).
void axpby(float alpha, const Tensor& x, float beta, Tensor& y);
// y = x * s (elementwise multiplication by a scalar).
void scale(const Tensor& x, float s, Tensor& y);
// y = a * b (elementwise).
void multiply(const Tensor& a, const Tensor& b, Tensor& y);
void fill(Tensor& x, float value);

// x[r, :] += bias[0, :] for every row (bias [1, C]).
void add_row_vector(Tensor& x, const Tensor& bias);
// y[r, :] = x[r, :] + bias[0, :] (y may be x): one pass, not a copy and then an add.
void add_row_vector(const Tensor& x, const Tensor& bias, Tensor& y);
// out[0, c] = beta * out[0, c] + sum_r x[r, c] (bias gradients), fixed order.
void column_sums(const Tensor& x, Tensor& out, float beta = 0.0f);
// y[r, :] = x[r, :] * s[r, 0].
void scale_rows(const Tensor& x, const Tensor& s, Tensor& y);

void relu(const Tensor& x, Tensor& y);
// grad_x = grad_y where y > 0, else 0 (y: the relu output).
void relu_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);

// Inverted dropout: y = x * keep / (1 - p), keep decided per element by Philox keyed
// by (seed, stream, element index) — the same mask on every device and in backward.
void dropout(const Tensor& x, float p, uint64_t seed, uint64_t stream, Tensor& y);
void dropout_backward(const Tensor& grad_y, float p, uint64_t seed, uint64_t stream, Tensor& grad_x);
// The same mask applied to a flat vector (sparse dropout on stored values).
void dropout_values(VectorView<const float> x, float p, uint64_t seed, uint64_t stream, VectorView<float> y);

// Row-wise log-softmax, and its backward: grad_x = grad_y - exp(y) * rowsum(grad_y).
void log_softmax_rows(const Tensor& x, Tensor& y);
void log_softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);

// Mean negative log-likelihood over the selected rows: -mean_i logp[rows[i], labels[rows[i]]].
// When grad is given (shape of logp) it is overwritten with d loss / d logp.
float nll_loss(const Tensor& logp, const IndexTensor& labels, const IndexTensor& rows, Tensor* grad);
// Mean binary cross-entropy with logits over the selected rows and all columns
// (multi-label; targets in {0, 1} as float [N, C]); grad as above.
float bce_with_logits(const Tensor& logits, const Tensor& targets, const IndexTensor& rows, Tensor* grad);

// out = [a | b] (column concatenation) and its inverse.
void concat_cols(const Tensor& a, const Tensor& b, Tensor& out);
void split_cols(const Tensor& in, Tensor& a, Tensor& b);

// y[r] = x[r] / max(||x[r]||_2, eps); norms[r] = max(||x[r]||, eps) kept for backward.
void l2_normalize_rows(const Tensor& x, float eps, Tensor& y, Tensor& norms);
void l2_normalize_backward(const Tensor& y, const Tensor& norms, float eps, const Tensor& grad_y, Tensor& grad_x);

// Column of the largest value per row (ties -> lower column), as int64 [N, 1].
IndexTensor argmax_rows(const Tensor& x);
// Fraction of the selected rows whose argmax equals the label.
double accuracy(const Tensor& scores, const IndexTensor& labels, const IndexTensor& rows);
// Sum of squares of all elements (double accumulation).
double squared_norm(const Tensor& x);

// Optimizer steps, elementwise over a parameter (shared math in ops_core.hpp).
struct AdamStep {
  float lr, beta1, beta2, eps, weight_decay;
  bool decoupled;  // AdamW: decay the weights directly instead of adding wd * p to the gradient
  int64_t step;    // 1-based, for bias correction
};
void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStep& step);
struct SgdStep {
  float lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool first;  // the momentum buffer is initialised with the first gradient, as in PyTorch
};
void sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const SgdStep& step);

}  // namespace edgewise::gnn::ops
