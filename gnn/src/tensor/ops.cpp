// Dense ops: shape and device checks, then the CPU or CUDA implementation.
#include "edgewise/gnn/tensor/ops.hpp"

#include "edgewise/kernels/common/check.hpp"
#include "tensor/ops_backends.hpp"

namespace edgewise::gnn::ops {

namespace {

[[noreturn, maybe_unused]] void built_without_cuda(const char* op) {
  detail::throw_invalid_argument(op, ": edgewise was built without CUDA");
}

// Calls the backend function for `device` (CPU or CUDA).
#if EDGEWISE_WITH_CUDA
#define EW_DISPATCH(op, device, ...) \
  ((device).is_cpu() ? cpu::op(__VA_ARGS__) : cuda::op(__VA_ARGS__))
#else
#define EW_DISPATCH(op, device, ...) \
  ((device).is_cpu() ? cpu::op(__VA_ARGS__) : (built_without_cuda(#op), cpu::op(__VA_ARGS__)))
#endif

template <class A, class B>
void same_device(const char* op, const char* an, const A& a, const char* bn, const B& b) {
  EW_REQUIRE(a.device() == b.device(), op, ": ", an, " is on ", a.device().str(), " but ", bn, " is on ",
             b.device().str());
}

template <class A, class B>
void same_shape(const char* op, const char* an, const A& a, const char* bn, const B& b) {
  EW_REQUIRE(a.rows() == b.rows() && a.cols() == b.cols(), op, ": ", bn, " ", b.shape_str(), " must have the shape of ",
             an, " ", a.shape_str());
  same_device(op, an, a, bn, b);
}

}  // namespace

void matmul(const Tensor& a, bool transpose_a, const Tensor& b, bool transpose_b, Tensor& c, float alpha, float beta) {
  const int64_t m = transpose_a ? a.cols() : a.rows();
  const int64_t k = transpose_a ? a.rows() : a.cols();
  const int64_t kb = transpose_b ? b.cols() : b.rows();
  const int64_t n = transpose_b ? b.rows() : b.cols();
  EW_REQUIRE(k == kb, "matmul: inner dimensions differ: op(a) is [", m, ", ", k, "], op(b) is [", kb, ", ", n, "]");
  EW_REQUIRE(c.rows() == m && c.cols() == n, "matmul: c ", c.shape_str(), " must be [", m, ", ", n, "]");
  same_device("matmul", "a", a, "b", b);
  same_device("matmul", "a", a, "c", c);
  EW_DISPATCH(matmul, a.device(), a, transpose_a, b, transpose_b, c, alpha, beta);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  Tensor c(transpose_a ? a.cols() : a.rows(), transpose_b ? b.rows() : b.cols(), a.device());
  matmul(a, transpose_a, b, transpose_b, c, 1.0f, 0.0f);
  return c;
}

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  same_shape("axpby", "x", x, "y", y);
  EW_DISPATCH(axpby, x.device(), alpha, x, beta, y);
}

void scale(const Tensor& x, float s, Tensor& y) { axpby(s, x, 0.0f, y); }

void multiply(const Tensor& a, const Tensor& b, Tensor& y) {
  same_shape("multiply", "a", a, "b", b);
  same_shape("multiply", "a", a, "y", y);
  EW_DISPATCH(multiply, a.device(), a, b, y);
}

void fill(Tensor& x, float value) { EW_DISPATCH(fill, x.device(), x, value); }

void add_row_vector(Tensor& x, const Tensor& bias) { add_row_vector(x, bias, x); }

void add_row_vector(const Tensor& x, const Tensor& bias, Tensor& y) {
  EW_REQUIRE(bias.rows() == 1 && bias.cols() == x.cols(), "add_row_vector: bias ", bias.shape_str(), " must be [1, ",
             x.cols(), "]");
  same_shape("add_row_vector", "x", x, "y", y);
  same_device("add_row_vector", "x", x, "bias", bias);
  same_device("add_row_vector", "x", x, "y", y);
  EW_DISPATCH(add_row_vector, x.device(), x, bias, y);
}

void column_sums(const Tensor& x, Tensor& out, float beta) {
  EW_REQUIRE(out.rows() == 1 && out.cols() == x.cols(), "column_sums: out ", out.shape_str(), " must be [1, ",
             x.cols(), "]");
  same_device("column_sums", "x", x, "out", out);
  EW_DISPATCH(column_sums, x.device(), x, out, beta);
}

void scale_rows(const Tensor& x, const Tensor& s, Tensor& y) {
  EW_REQUIRE(s.rows() == x.rows() && s.cols() == 1, "scale_rows: s ", s.shape_str(), " must be [", x.rows(), ", 1]");
  same_shape("scale_rows", "x", x, "y", y);
  same_device("scale_rows", "x", x, "s", s);
  EW_DISPATCH(scale_rows, x.device(), x, s, y);
}

void relu(const Tensor& x, Tensor& y) {
  same_shape("relu", "x", x, "y", y);
  EW_DISPATCH(relu, x.device(), x, y);
}

void relu_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  same_shape("relu_backward", "y", y, "grad_y", grad_y);
  same_shape("relu_backward", "y", y, "grad_x", grad_x);
  EW_DISPATCH(relu_backward, y.device(), y, grad_y, grad_x);
}

void dropout_values(VectorView<const float> x, float p, uint64_t seed, uint64_t stream, VectorView<float> y) {
  EW_REQUIRE(p >= 0.0f && p < 1.0f, "dropout: p (", p, ") must lie in [0, 1)");
  EW_REQUIRE(x.size == y.size && x.device == y.device, "dropout: input and output differ in size or device");
  EW_DISPATCH(dropout_values, x.device, x, p, seed, stream, y);
}

void dropout(const Tensor& x, float p, uint64_t seed, uint64_t stream, Tensor& y) {
  same_shape("dropout", "x", x, "y", y);
  dropout_values(x.cflat(), p, seed, stream, y.flat());
}

void dropout_backward(const Tensor& grad_y, float p, uint64_t seed, uint64_t stream, Tensor& grad_x) {
  // The mask is a pure function of (seed, stream, index): apply it to the gradient.
  same_shape("dropout_backward", "grad_y", grad_y, "grad_x", grad_x);
  dropout_values(grad_y.cflat(), p, seed, stream, grad_x.flat());
}

void log_softmax_rows(const Tensor& x, Tensor& y) {
  same_shape("log_softmax", "x", x, "y", y);
  EW_DISPATCH(log_softmax_rows, x.device(), x, y);
}

void log_softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  same_shape("log_softmax_backward", "y", y, "grad_y", grad_y);
  same_shape("log_softmax_backward", "y", y, "grad_x", grad_x);
  EW_DISPATCH(log_softmax_backward, y.device(), y, grad_y, grad_x);
}

namespace {
void check_rows_and_labels(const char* op, const Tensor& scores, const IndexTensor& labels, const IndexTensor& rows) {
  EW_REQUIRE(labels.numel() == scores.rows(), op, ": labels has ", labels.numel(), " entries for ", scores.rows(),
             " rows");
  same_device(op, "scores", scores, "labels", labels);
  same_device(op, "scores", scores, "rows", rows);
}
}  // namespace

float nll_loss(const Tensor& logp, const IndexTensor& labels, const IndexTensor& rows, Tensor* grad) {
  check_rows_and_labels("nll_loss", logp, labels, rows);
  if (grad) same_shape("nll_loss", "logp", logp, "grad", *grad);
  return static_cast<float>(EW_DISPATCH(nll_loss, logp.device(), logp, labels, rows, grad));
}

float bce_with_logits(const Tensor& logits, const Tensor& targets, const IndexTensor& rows, Tensor* grad) {
  same_shape("bce_with_logits", "logits", logits, "targets", targets);
  same_device("bce_with_logits", "logits", logits, "rows", rows);
  if (grad) same_shape("bce_with_logits", "logits", logits, "grad", *grad);
  return static_cast<float>(EW_DISPATCH(bce_with_logits, logits.device(), logits, targets, rows, grad));
}

void concat_cols(const Tensor& a, const Tensor& b, Tensor& out) {
  EW_REQUIRE(a.rows() == b.rows() && out.rows() == a.rows() && out.cols() == a.cols() + b.cols(), "concat_cols: [",
             a.shape_str(), " | ", b.shape_str(), "] does not fit out ", out.shape_str());
  same_device("concat_cols", "a", a, "b", b);
  same_device("concat_cols", "a", a, "out", out);
  EW_DISPATCH(concat_cols, a.device(), a, b, out);
}

void split_cols(const Tensor& in, Tensor& a, Tensor& b) {
  EW_REQUIRE(a.rows() == b.rows() && in.rows() == a.rows() && in.cols() == a.cols() + b.cols(), "split_cols: ",
             in.shape_str(), " does not split into ", a.shape_str(), " and ", b.shape_str());
  same_device("split_cols", "in", in, "a", a);
  same_device("split_cols", "in", in, "b", b);
  EW_DISPATCH(split_cols, in.device(), in, a, b);
}

void l2_normalize_rows(const Tensor& x, float eps, Tensor& y, Tensor& norms) {
  same_shape("l2_normalize", "x", x, "y", y);
  EW_REQUIRE(norms.rows() == x.rows() && norms.cols() == 1, "l2_normalize: norms ", norms.shape_str(), " must be [",
             x.rows(), ", 1]");
  EW_DISPATCH(l2_normalize_rows, x.device(), x, eps, y, norms);
}

void l2_normalize_backward(const Tensor& y, const Tensor& norms, float eps, const Tensor& grad_y, Tensor& grad_x) {
  same_shape("l2_normalize_backward", "y", y, "grad_y", grad_y);
  same_shape("l2_normalize_backward", "y", y, "grad_x", grad_x);
  EW_DISPATCH(l2_normalize_backward, y.device(), y, norms, eps, grad_y, grad_x);
}

IndexTensor argmax_rows(const Tensor& x) {
  IndexTensor out(x.rows(), 1, x.device());
  EW_DISPATCH(argmax_rows, x.device(), x, out);
  return out;
}

double accuracy(const Tensor& scores, const IndexTensor& labels, const IndexTensor& rows) {
  check_rows_and_labels("accuracy", scores, labels, rows);
  const std::vector<int64_t> predicted = argmax_rows(scores).to_host_vector();
  const std::vector<int64_t> truth = labels.to_host_vector();
  const std::vector<int64_t> selected = rows.to_host_vector();
  if (selected.empty()) return 0.0;
  int64_t correct = 0;
  for (int64_t r : selected) correct += predicted[r] == truth[r];
  return static_cast<double>(correct) / static_cast<double>(selected.size());
}

double squared_norm(const Tensor& x) { return EW_DISPATCH(squared_norm, x.device(), x); }

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStep& step) {
  same_shape("adam", "param", param, "grad", grad);
  same_shape("adam", "param", param, "m", m);
  same_shape("adam", "param", param, "v", v);
  EW_REQUIRE(step.step >= 1, "adam: step (", step.step, ") must be >= 1");
  EW_DISPATCH(adam_update, param.device(), param, grad, m, v, step);
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& momentum_buffer, const SgdStep& step) {
  same_shape("sgd", "param", param, "grad", grad);
  same_shape("sgd", "param", param, "momentum_buffer", momentum_buffer);
  EW_DISPATCH(sgd_update, param.device(), param, grad, momentum_buffer, step);
}

}  // namespace edgewise::gnn::ops
