// Dense ops on the CPU: OpenMP loops over rows/elements calling the shared core math.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "edgewise/kernels/common/exp_nonpositive.hpp"
#include "tensor/isa_ops_cpu.hpp"
#include "tensor/ops_backends.hpp"
#include "tensor/ops_core.hpp"

namespace edgewise::gnn::ops::cpu {

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const float* xs = x.data();
  float* ys = y.data();
  const int64_t n = y.numel();
  if (beta == 0.0f) {
#pragma omp parallel for simd if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) ys[i] = alpha * xs[i];
  } else {
#pragma omp parallel for simd if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i) ys[i] = alpha * xs[i] + beta * ys[i];
  }
}

void multiply(const Tensor& a, const Tensor& b, Tensor& y) {
  const float* as = a.data();
  const float* bs = b.data();
  float* ys = y.data();
  const int64_t n = y.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) ys[i] = as[i] * bs[i];
}

void fill(Tensor& x, float value) { std::fill(x.data(), x.data() + x.numel(), value); }

void add_row_vector(const Tensor& x, const Tensor& bias, Tensor& y) {
  const int64_t rows = x.rows(), cols = x.cols();
  const float* xs = x.data();
  const float* bs = bias.data();
  float* ys = y.data();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) ys[r * cols + c] = xs[r * cols + c] + bs[c];
  }
}

void column_sums(const Tensor& x, Tensor& out, float beta) {
  // Fixed blocks of rows reduced in parallel, then merged in block order: the
  // result does not depend on the thread count.
  constexpr int64_t kBlockRows = 4096;
  const int64_t rows = x.rows(), cols = x.cols();
  const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  std::vector<double> partial(static_cast<size_t>(std::max<int64_t>(blocks, 1) * cols), 0.0);
  const float* xs = x.data();
#pragma omp parallel for schedule(static) if (rows * cols > kParallelThreshold)
  for (int64_t b = 0; b < blocks; ++b) {
    double* acc = partial.data() + b * cols;
    for (int64_t r = b * kBlockRows; r < std::min(rows, (b + 1) * kBlockRows); ++r) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) acc[c] += xs[r * cols + c];
    }
  }
  float* os = out.data();
  for (int64_t c = 0; c < cols; ++c) {
    double total = 0;
    for (int64_t b = 0; b < blocks; ++b) total += partial[b * cols + c];
    os[c] = static_cast<float>(beta == 0.0f ? total : beta * os[c] + total);
  }
}

void scale_rows(const Tensor& x, const Tensor& s, Tensor& y) {
  const int64_t rows = x.rows(), cols = x.cols();
  const float* xs = x.data();
  const float* ss = s.data();
  float* ys = y.data();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    const float f = ss[r];
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) ys[r * cols + c] = xs[r * cols + c] * f;
  }
}

void relu(const Tensor& x, Tensor& y) {
  const float* xs = x.data();
  float* ys = y.data();
  const int64_t n = x.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) ys[i] = core::relu(xs[i]);
}

void relu_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  const float* ys = y.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
  const int64_t n = y.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) out[i] = core::relu_grad(ys[i], gs[i]);
}

void dropout_values(VectorView<const float> x, float p, uint64_t seed, uint64_t stream, VectorView<float> y) {
  EW_DISPATCH_CPU_ISA(dropout, x.data, y.data, x.size, p, seed, stream);
}

// exp(x - max) <= 1 is exactly exp_nonpositive's domain: vectorised, within 1 ulp of
// expf (libm's exp was a scalar call per element). Exps go to a per-thread row first
// (y may alias x), then sum in double in column order.
void log_softmax_rows(const Tensor& x, Tensor& y) {
  const int64_t rows = x.rows(), cols = x.cols();
  const float* xs = x.data();
  float* ys = y.data();
#pragma omp parallel if (rows * cols > kParallelThreshold)
  {
    std::vector<float> exps(static_cast<size_t>(cols));
    float* __restrict e = exps.data();
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      const float* in = xs + r * cols;
      float* out = ys + r * cols;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < cols; ++c) max = std::max(max, in[c]);
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) e[c] = detail::exp_nonpositive(in[c] - max);
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += e[c];
      const float log_sum = static_cast<float>(std::log(sum)) + max;
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c) out[c] = in[c] - log_sum;
    }
  }
}

// y is log_softmax_rows' output, <= 0 (in - log_sum with log_sum >= max >= in), so
// exp(y) is exp_nonpositive's domain too (a std::min guard here stops GCC vectorising).
void log_softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  const int64_t rows = y.rows(), cols = y.cols();
  const float* ys = y.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    double gsum = 0;
    for (int64_t c = 0; c < cols; ++c) gsum += gs[r * cols + c];
    const float g = static_cast<float>(gsum);
    const float* y_row = ys + r * cols;
    const float* g_row = gs + r * cols;
    float* o_row = out + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) o_row[c] = g_row[c] - detail::exp_nonpositive(y_row[c]) * g;
  }
}

double nll_loss(const Tensor& logp, const IndexTensor& labels, const IndexTensor& rows, Tensor* grad) {
  const int64_t n = rows.numel(), cols = logp.cols();
  const int64_t* rs = rows.data();
  const int64_t* ls = labels.data();
  if (grad) std::fill(grad->data(), grad->data() + grad->numel(), 0.0f);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rs[i];
    total -= logp.data()[r * cols + ls[r]];
    if (grad) grad->data()[r * cols + ls[r]] -= 1.0f / static_cast<float>(n);
  }
  return n > 0 ? total / static_cast<double>(n) : 0.0;
}

double bce_with_logits(const Tensor& logits, const Tensor& targets, const IndexTensor& rows, Tensor* grad) {
  const int64_t n = rows.numel(), cols = logits.cols();
  const int64_t* rs = rows.data();
  if (grad) std::fill(grad->data(), grad->data() + grad->numel(), 0.0f);
  const double denom = static_cast<double>(n * cols);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = rs[i];
    for (int64_t c = 0; c < cols; ++c) {
      const float x = logits.data()[r * cols + c], t = targets.data()[r * cols + c];
      total += core::bce_with_logits(x, t);
      if (grad) grad->data()[r * cols + c] = static_cast<float>((core::sigmoid(x) - t) / denom);
    }
  }
  return n > 0 ? total / denom : 0.0;
}

void concat_cols(const Tensor& a, const Tensor& b, Tensor& out) {
  const int64_t rows = a.rows(), ca = a.cols(), cb = b.cols(), co = ca + cb;
#pragma omp parallel for if (rows * co > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(a.data() + r * ca, a.data() + (r + 1) * ca, out.data() + r * co);
    std::copy(b.data() + r * cb, b.data() + (r + 1) * cb, out.data() + r * co + ca);
  }
}

void split_cols(const Tensor& in, Tensor& a, Tensor& b) {
  const int64_t rows = in.rows(), ca = a.cols(), cb = b.cols(), ci = ca + cb;
#pragma omp parallel for if (rows * ci > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(in.data() + r * ci, in.data() + r * ci + ca, a.data() + r * ca);
    std::copy(in.data() + r * ci + ca, in.data() + (r + 1) * ci, b.data() + r * cb);
  }
}

void l2_normalize_rows(const Tensor& x, float eps, Tensor& y, Tensor& norms) {
  const int64_t rows = x.rows(), cols = x.cols();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += static_cast<double>(x.data()[r * cols + c]) * x.data()[r * cols + c];
    const float norm = std::max(static_cast<float>(std::sqrt(ss)), eps);
    norms.data()[r] = norm;
    for (int64_t c = 0; c < cols; ++c) y.data()[r * cols + c] = x.data()[r * cols + c] / norm;
  }
}

void l2_normalize_backward(const Tensor& y, const Tensor& norms, float eps, const Tensor& grad_y, Tensor& grad_x) {
  // y = x / n with n = max(||x||, eps): dx = (g - y * (y . g)) / n when ||x|| > eps, else g / n.
  const int64_t rows = y.rows(), cols = y.cols();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    const float* yr = y.data() + r * cols;
    const float* gr = grad_y.data() + r * cols;
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(yr[c]) * gr[c];
    const float n = norms.data()[r];
    const bool clamped = n <= eps;  // the norm was the eps floor: y = x / eps is linear
    for (int64_t c = 0; c < cols; ++c) {
      grad_x.data()[r * cols + c] = clamped ? gr[c] / n : static_cast<float>((gr[c] - yr[c] * dot) / n);
    }
  }
}

void argmax_rows(const Tensor& x, IndexTensor& out) {
  const int64_t rows = x.rows(), cols = x.cols();
#pragma omp parallel for if (rows * cols > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (x.data()[r * cols + c] > x.data()[r * cols + best]) best = c;
    }
    out.data()[r] = cols > 0 ? best : -1;
  }
}

double squared_norm(const Tensor& x) {
  double total = 0;
  const float* xs = x.data();
  const int64_t n = x.numel();
#pragma omp parallel for simd reduction(+ : total) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) total += static_cast<double>(xs[i]) * xs[i];
  return total;
}

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStep& step) {
  const float bias1 = 1.0f - std::pow(step.beta1, static_cast<float>(step.step));
  const float bias2 = 1.0f - std::pow(step.beta2, static_cast<float>(step.step));
  float* ps = param.data();
  const float* gs = grad.data();
  float* ms = m.data();
  float* vs = v.data();
  const int64_t n = param.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) ps[i] = core::adam(ps[i], gs[i], ms[i], vs[i], step, bias1, bias2);
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& buf, const SgdStep& step) {
  float* ps = param.data();
  const float* gs = grad.data();
  float* bs = buf.data();
  const int64_t n = param.numel();
#pragma omp parallel for simd if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) ps[i] = core::sgd(ps[i], gs[i], bs[i], step);
}

}  // namespace edgewise::gnn::ops::cpu
