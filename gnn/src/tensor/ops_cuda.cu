// Dense ops on CUDA: grid-stride kernels calling the shared core math; row-wise
// ops take one thread per row (rows are short: classes, hidden features). All of
// them run on the engine's stream for the device (stream.hpp).
#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "edgewise/kernels/common/cuda_check.hpp"
#include "edgewise/gnn/tensor/dropout_core.hpp"
#include "tensor/for_each_cuda.cuh"
#include "tensor/ops_backends.hpp"
#include "tensor/ops_core.hpp"

namespace edgewise::gnn::ops::cuda {

namespace {

// Every launch, memset and copy below goes to the engine's stream for the device
// (on_device), so the ops run in issue order with the kernels the engine calls.
using gnn::cuda_launch::copy_to_host;
using gnn::cuda_launch::for_each;
using gnn::cuda_launch::on_device;

template <class T>
std::vector<T> to_host(const T* d_data, int64_t n, cudaStream_t stream) {
  std::vector<T> host(static_cast<size_t>(n));
  copy_to_host(host.data(), d_data, n, stream);
  return host;
}

}  // namespace

void axpby(float alpha, const Tensor& x, float beta, Tensor& y) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  float* ys = y.data();
  if (beta == 0.0f) {
    for_each(stream, y.numel(), [=] __device__(int64_t i) { ys[i] = alpha * xs[i]; });
  } else {
    for_each(stream, y.numel(), [=] __device__(int64_t i) { ys[i] = alpha * xs[i] + beta * ys[i]; });
  }
}

void multiply(const Tensor& a, const Tensor& b, Tensor& y) {
  const cudaStream_t stream = on_device(a.device());
  const float* as = a.data();
  const float* bs = b.data();
  float* ys = y.data();
  for_each(stream, y.numel(), [=] __device__(int64_t i) { ys[i] = as[i] * bs[i]; });
}

void fill(Tensor& x, float value) {
  const cudaStream_t stream = on_device(x.device());
  float* xs = x.data();
  for_each(stream, x.numel(), [=] __device__(int64_t i) { xs[i] = value; });
}

void add_row_vector(const Tensor& x, const Tensor& bias, Tensor& y) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  const float* bs = bias.data();
  float* ys = y.data();
  const int64_t cols = x.cols();
  for_each(stream, x.numel(), [=] __device__(int64_t i) { ys[i] = xs[i] + bs[i % cols]; });
}

void column_sums(const Tensor& x, Tensor& out, float beta) {
  // One thread per column, rows in a fixed order: deterministic; enough for bias
  // gradients, whose row counts are modest next to the products around them.
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  float* os = out.data();
  const int64_t rows = x.rows(), cols = x.cols();
  for_each(stream, cols, [=] __device__(int64_t c) {
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) total += xs[r * cols + c];
    os[c] = static_cast<float>(beta == 0.0f ? total : beta * os[c] + total);
  });
}

void scale_rows(const Tensor& x, const Tensor& s, Tensor& y) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  const float* ss = s.data();
  float* ys = y.data();
  const int64_t cols = x.cols();
  for_each(stream, x.numel(), [=] __device__(int64_t i) { ys[i] = xs[i] * ss[i / cols]; });
}

void relu(const Tensor& x, Tensor& y) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  float* ys = y.data();
  for_each(stream, x.numel(), [=] __device__(int64_t i) { ys[i] = core::relu(xs[i]); });
}

void relu_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  const cudaStream_t stream = on_device(y.device());
  const float* ys = y.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
  for_each(stream, y.numel(), [=] __device__(int64_t i) { out[i] = core::relu_grad(ys[i], gs[i]); });
}

void dropout_values(VectorView<const float> x, float p, uint64_t seed, uint64_t stream, VectorView<float> y) {
  const cudaStream_t cuda_stream = on_device(x.device);  // `stream` is the RNG stream here
  const DropoutMask mask(p, seed, stream);
  const float* xs = x.data;
  float* ys = y.data;
  const int64_t n = x.size;
  for_each(cuda_stream, (n + 3) / 4, [=] __device__(int64_t b) { mask.apply_block(xs, ys, b, n); });
}

void log_softmax_rows(const Tensor& x, Tensor& y) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  float* ys = y.data();
  const int64_t cols = x.cols();
  for_each(stream, x.rows(), [=] __device__(int64_t r) {
    const float* in = xs + r * cols;
    float max = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) max = fmaxf(max, in[c]);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += exp(static_cast<double>(in[c] - max));
    const float log_sum = static_cast<float>(log(sum)) + max;
    for (int64_t c = 0; c < cols; ++c) ys[r * cols + c] = in[c] - log_sum;
  });
}

void log_softmax_backward(const Tensor& y, const Tensor& grad_y, Tensor& grad_x) {
  const cudaStream_t stream = on_device(y.device());
  const float* ys = y.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
  const int64_t cols = y.cols();
  for_each(stream, y.rows(), [=] __device__(int64_t r) {
    double gsum = 0;
    for (int64_t c = 0; c < cols; ++c) gsum += gs[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = gs[r * cols + c] - expf(ys[r * cols + c]) * static_cast<float>(gsum);
    }
  });
}

double nll_loss(const Tensor& logp, const IndexTensor& labels, const IndexTensor& rows, Tensor* grad) {
  const cudaStream_t stream = on_device(logp.device());
  const int64_t n = rows.numel(), cols = logp.cols();
  const float* lp = logp.data();
  const int64_t* ls = labels.data();
  const int64_t* rs = rows.data();
  Tensor picked(n, 1, logp.device());
  float* ps = picked.data();
  for_each(stream, n, [=] __device__(int64_t i) { ps[i] = lp[rs[i] * cols + ls[rs[i]]]; });
  if (grad) {
    float* gs = grad->data();
    EW_CUDA_CHECK(cudaMemsetAsync(gs, 0, grad->bytes(), stream));
    const float w = n > 0 ? -1.0f / static_cast<float>(n) : 0.0f;
    for_each(stream, n, [=] __device__(int64_t i) { atomicAdd(gs + rs[i] * cols + ls[rs[i]], w); });
  }
  double total = 0;
  for (float v : to_host(ps, n, stream)) total -= v;
  return n > 0 ? total / static_cast<double>(n) : 0.0;
}

double bce_with_logits(const Tensor& logits, const Tensor& targets, const IndexTensor& rows, Tensor* grad) {
  const cudaStream_t stream = on_device(logits.device());
  const int64_t n = rows.numel(), cols = logits.cols();
  const float* xs = logits.data();
  const float* ts = targets.data();
  const int64_t* rs = rows.data();
  Tensor terms(n, cols, logits.device());
  float* tms = terms.data();
  const float denom = static_cast<float>(n * cols);
  float* gs = grad ? grad->data() : nullptr;
  if (grad) EW_CUDA_CHECK(cudaMemsetAsync(gs, 0, grad->bytes(), stream));
  for_each(stream, n * cols, [=] __device__(int64_t i) {
    const int64_t r = rs[i / cols], c = i % cols;
    const float x = xs[r * cols + c], t = ts[r * cols + c];
    tms[i] = core::bce_with_logits(x, t);
    if (gs) gs[r * cols + c] = (core::sigmoid(x) - t) / denom;
  });
  double total = 0;
  for (float v : to_host(tms, n * cols, stream)) total += v;
  return n > 0 ? total / static_cast<double>(denom) : 0.0;
}

void concat_cols(const Tensor& a, const Tensor& b, Tensor& out) {
  const cudaStream_t stream = on_device(a.device());
  const float* as = a.data();
  const float* bs = b.data();
  float* os = out.data();
  const int64_t ca = a.cols(), cb = b.cols(), co = ca + cb;
  for_each(stream, out.numel(), [=] __device__(int64_t i) {
    const int64_t r = i / co, c = i % co;
    os[i] = c < ca ? as[r * ca + c] : bs[r * cb + (c - ca)];
  });
}

void split_cols(const Tensor& in, Tensor& a, Tensor& b) {
  const cudaStream_t stream = on_device(in.device());
  const float* is = in.data();
  float* as = a.data();
  float* bs = b.data();
  const int64_t ca = a.cols(), cb = b.cols(), ci = ca + cb;
  for_each(stream, in.numel(), [=] __device__(int64_t i) {
    const int64_t r = i / ci, c = i % ci;
    if (c < ca) {
      as[r * ca + c] = is[i];
    } else {
      bs[r * cb + (c - ca)] = is[i];
    }
  });
}

void l2_normalize_rows(const Tensor& x, float eps, Tensor& y, Tensor& norms) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  float* ys = y.data();
  float* ns = norms.data();
  const int64_t cols = x.cols();
  for_each(stream, x.rows(), [=] __device__(int64_t r) {
    double ss = 0;
    for (int64_t c = 0; c < cols; ++c) ss += static_cast<double>(xs[r * cols + c]) * xs[r * cols + c];
    const float norm = fmaxf(static_cast<float>(sqrt(ss)), eps);
    ns[r] = norm;
    for (int64_t c = 0; c < cols; ++c) ys[r * cols + c] = xs[r * cols + c] / norm;
  });
}

void l2_normalize_backward(const Tensor& y, const Tensor& norms, float eps, const Tensor& grad_y, Tensor& grad_x) {
  const cudaStream_t stream = on_device(y.device());
  const float* ys = y.data();
  const float* ns = norms.data();
  const float* gs = grad_y.data();
  float* out = grad_x.data();
  const int64_t cols = y.cols();
  for_each(stream, y.rows(), [=] __device__(int64_t r) {
    double dot = 0;
    for (int64_t c = 0; c < cols; ++c) dot += static_cast<double>(ys[r * cols + c]) * gs[r * cols + c];
    const float n = ns[r];
    const bool clamped = n <= eps;
    for (int64_t c = 0; c < cols; ++c) {
      const float g = gs[r * cols + c];
      out[r * cols + c] = clamped ? g / n : static_cast<float>((g - ys[r * cols + c] * dot) / n);
    }
  });
}

void argmax_rows(const Tensor& x, IndexTensor& out) {
  const cudaStream_t stream = on_device(x.device());
  const float* xs = x.data();
  int64_t* os = out.data();
  const int64_t cols = x.cols();
  for_each(stream, x.rows(), [=] __device__(int64_t r) {
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (xs[r * cols + c] > xs[r * cols + best]) best = c;
    }
    os[r] = cols > 0 ? best : -1;
  });
}

double squared_norm(const Tensor& x) {
  const cudaStream_t stream = on_device(x.device());
  double total = 0;
  for (float v : to_host(x.data(), x.numel(), stream)) total += static_cast<double>(v) * v;
  return total;
}

void adam_update(Tensor& param, const Tensor& grad, Tensor& m, Tensor& v, const AdamStep& step) {
  const cudaStream_t stream = on_device(param.device());
  const float bias1 = 1.0f - std::pow(step.beta1, static_cast<float>(step.step));
  const float bias2 = 1.0f - std::pow(step.beta2, static_cast<float>(step.step));
  float* ps = param.data();
  const float* gs = grad.data();
  float* ms = m.data();
  float* vs = v.data();
  const AdamStep s = step;
  for_each(stream, param.numel(),
           [=] __device__(int64_t i) { ps[i] = core::adam(ps[i], gs[i], ms[i], vs[i], s, bias1, bias2); });
}

void sgd_update(Tensor& param, const Tensor& grad, Tensor& buf, const SgdStep& step) {
  const cudaStream_t stream = on_device(param.device());
  float* ps = param.data();
  const float* gs = grad.data();
  float* bs = buf.data();
  const SgdStep s = step;
  for_each(stream, param.numel(), [=] __device__(int64_t i) { ps[i] = core::sgd(ps[i], gs[i], bs[i], s); });
}

}  // namespace edgewise::gnn::ops::cuda
