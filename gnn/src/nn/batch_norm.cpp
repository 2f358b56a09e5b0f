// BatchNorm1d: per-column normalisation with batch or running statistics, and its backward.
#include "edgewise/gnn/nn/batch_norm.hpp"

#include <cmath>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// Backward of training-mode batch norm, with xhat and 1 / sqrt(var + eps) kept from
// the forward: dx = weight * invstd / N * (N g - sum g - xhat sum(g xhat)).
struct BatchNormNode : Node {
  std::vector<float> xhat, invstd;  // [N * C], [C]
  const char* name() const override { return "batch_norm"; }
  void backward(const Tensor& g) override {
    const Device device = g.device();
    const int64_t n = g.rows(), c = g.cols();
    const std::vector<float> grad = g.to_host_vector();
    const std::vector<float> weight = inputs[1].value().to_host_vector();
    std::vector<double> sum_g(static_cast<size_t>(c), 0.0), sum_gx(static_cast<size_t>(c), 0.0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t k = 0; k < c; ++k) {
        const size_t i = static_cast<size_t>(r * c + k);
        sum_g[k] += grad[i];
        sum_gx[k] += static_cast<double>(grad[i]) * xhat[i];
      }
    if (inputs[0].requires_grad()) {
      std::vector<float> gx(grad.size());
      for (int64_t r = 0; r < n; ++r)
        for (int64_t k = 0; k < c; ++k) {
          const size_t i = static_cast<size_t>(r * c + k);
          const double scaled = static_cast<double>(n) * grad[i] - sum_g[k] - xhat[i] * sum_gx[k];
          gx[i] = static_cast<float>(weight[k] * invstd[k] / static_cast<double>(n) * scaled);
        }
      inputs[0].accumulate_grad(Tensor::from_host(gx, n, c, device));
    }
    std::vector<float> gw(static_cast<size_t>(c)), gb(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) {
      gw[k] = static_cast<float>(sum_gx[k]);
      gb[k] = static_cast<float>(sum_g[k]);
    }
    if (inputs[1].requires_grad()) inputs[1].accumulate_grad(Tensor::from_host(gw, 1, c, device));
    if (inputs[2].requires_grad()) inputs[2].accumulate_grad(Tensor::from_host(gb, 1, c, device));
  }
};

// Evaluation mode: an affine map per column, y = x * scale + shift.
struct AffineColumnsNode : Node {
  std::vector<float> scale;
  const char* name() const override { return "batch_norm_eval"; }
  void backward(const Tensor& g) override {
    if (!inputs[0].requires_grad()) return;
    std::vector<float> gx = g.to_host_vector();
    const auto c = static_cast<size_t>(g.cols());
    for (size_t i = 0; i < gx.size(); ++i) gx[i] *= scale[i % c];
    inputs[0].accumulate_grad(Tensor::from_host(gx, g.rows(), g.cols(), g.device()));
  }
};

}  // namespace

BatchNorm1d::BatchNorm1d(int64_t features, float eps, float momentum, Device device)
    : eps_(eps), momentum_(momentum) {
  EW_REQUIRE(features >= 1, "BatchNorm1d: features (", features, ") must be >= 1");
  EW_REQUIRE(eps > 0 && momentum >= 0 && momentum <= 1, "BatchNorm1d: eps (", eps, ") must be > 0 and momentum (",
             momentum, ") in [0, 1]");
  weight_ = parameter(Tensor::full(1, features, 1.0f, device), "bn.weight");
  bias_ = parameter(Tensor::zeros(1, features, device), "bn.bias");
  running_mean_ = Tensor::zeros(1, features, device);
  running_var_ = Tensor::full(1, features, 1.0f, device);
}

Variable BatchNorm1d::forward(const Variable& x) {
  const int64_t n = x.rows(), c = x.cols();
  EW_REQUIRE(c == weight_.cols(), "BatchNorm1d: x ", x.value().shape_str(), " has ", c, " columns, expected ",
             weight_.cols());
  const Device device = x.device();
  const std::vector<float> xs = x.value().to_host_vector();
  const std::vector<float> w = weight_.value().to_host_vector(), b = bias_.value().to_host_vector();
  std::vector<float> y(xs.size());
  if (!training()) {
    const std::vector<float> mean = running_mean_.to_host_vector(), var = running_var_.to_host_vector();
    auto node = std::make_shared<AffineColumnsNode>();
    node->scale.resize(static_cast<size_t>(c));
    for (int64_t k = 0; k < c; ++k) node->scale[k] = w[k] / std::sqrt(var[k] + eps_);
    for (size_t i = 0; i < xs.size(); ++i) {
      const size_t k = i % static_cast<size_t>(c);
      y[i] = (xs[i] - mean[k]) * node->scale[k] + b[k];
    }
    node->inputs = {x};
    return record(Tensor::from_host(y, n, c, device), std::move(node));
  }
  EW_REQUIRE(n >= 2, "BatchNorm1d: training needs at least 2 rows, got ", n);
  std::vector<double> mean(static_cast<size_t>(c), 0.0), var(static_cast<size_t>(c), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < c; ++k) mean[k] += xs[static_cast<size_t>(r * c + k)];
  for (double& m : mean) m /= static_cast<double>(n);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < c; ++k) {
      const double d = xs[static_cast<size_t>(r * c + k)] - mean[k];
      var[k] += d * d;
    }
  for (double& v : var) v /= static_cast<double>(n);
  auto node = std::make_shared<BatchNormNode>();
  node->xhat.resize(xs.size());
  node->invstd.resize(static_cast<size_t>(c));
  for (int64_t k = 0; k < c; ++k) node->invstd[k] = static_cast<float>(1.0 / std::sqrt(var[k] + eps_));
  for (int64_t r = 0; r < n; ++r)
    for (int64_t k = 0; k < c; ++k) {
      const size_t i = static_cast<size_t>(r * c + k);
      node->xhat[i] = static_cast<float>((xs[i] - mean[k]) * node->invstd[k]);
      y[i] = node->xhat[i] * w[k] + b[k];
    }
  {  // running statistics (unbiased variance, as PyTorch)
    std::vector<float> rm = running_mean_.to_host_vector(), rv = running_var_.to_host_vector();
    for (int64_t k = 0; k < c; ++k) {
      rm[k] = static_cast<float>((1 - momentum_) * rm[k] + momentum_ * mean[k]);
      rv[k] = static_cast<float>((1 - momentum_) * rv[k] + momentum_ * var[k] * n / static_cast<double>(n - 1));
    }
    running_mean_ = Tensor::from_host(rm, 1, c, device);
    running_var_ = Tensor::from_host(rv, 1, c, device);
  }
  node->inputs = {x, weight_, bias_};
  return record(Tensor::from_host(y, n, c, device), std::move(node));
}

NamedParameters BatchNorm1d::named_parameters() const { return {{"weight", weight_}, {"bias", bias_}}; }
std::vector<Variable> BatchNorm1d::parameters() const { return {weight_, bias_}; }
std::string BatchNorm1d::describe() const { return "BatchNorm1d(" + std::to_string(weight_.cols()) + ")"; }

}  // namespace edgewise::gnn
