// The dense ops' per-device implementations; ops.cpp validates, then calls one.
#pragma once

#include "edgewise/gnn/tensor/ops.hpp"

// Declared identically for both backends (cpu: ops_cpu.cpp + matmul_cpu.cpp;
// cuda: ops_cuda.cu + matmul_cuda.cpp). Arguments are already validated.
#define EW_DENSE_OPS_DECLARATIONS                                                                        \
  void matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c, float alpha, float beta);   \
  void axpby(float alpha, const Tensor& x, float beta, Tensor& y);                                      \
  void multiply(const Tensor& a, const Tensor& b, Tensor& y);                                           \
  void fill(Tensor& x, float value);                                                                    \
  void add_row_vector(const Tensor& x, const Tensor& bias, Tensor& y);                                  \
  void column_sums(const Tensor& x, Tensor& out, float beta);                                           \
  void scale_rows(const Tensor& x, const Tensor& s, Tensor& y);                                         \
  void relu(const Tensor& x, Tensor& y);                                                                \
  void relu_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);                            \
  void dropout_values(VectorView<const float> x, float p, uint64_t seed, uint64_t stream,               \
                      VectorView<float> y);                                                             \
  void log_softmax_rows(const Tensor& x, Tensor& y);                                                    \
  void log_softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x);                     \
  double nll_loss(const Tensor& logp, const IndexTensor& labels, const IndexTensor& rows, Tensor* grad); \
  double bce_with_logits(const Tensor& logits, const Tensor& targets, const IndexTensor& rows,          \
                         Tensor* grad);                                                                 \
  void concat_cols(const Tensor& a, const Tensor& b, Tensor& out);                                      \
  void split_cols(const Tensor& in, Tensor& a, Tensor& b);                                              \
  void l2_normalize_rows(const Tensor& x, float eps, Tensor& y, Tensor& norms);                         \
  void l2_normalize_backward(const Tensor& y, const Tensor& norms, float eps, const Tensor& grad_y,      \
                             Tensor& grad_x);                                                          \
  void argmax_rows(const Tensor& x, IndexTensor& out);                                                  \
  double squared_norm(const Tensor& x);                                                                 \
  void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStep& step);      \
  void sgd_update(Tensor& param, const Tensor& grad, Tensor& buf, const SgdStep& step);

namespace edgewise::gnn::ops::cpu {
EW_DENSE_OPS_DECLARATIONS
}  // namespace edgewise::gnn::ops::cpu

namespace edgewise::gnn::ops::cuda {
EW_DENSE_OPS_DECLARATIONS
}  // namespace edgewise::gnn::ops::cuda
