// Gradient checking for the engine's differentiable ops: the analytic float32
// gradient from the tape against central finite differences of an independent
// double-precision reference forward, for a random projection loss sum(r * f(x)).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "edgewise/gnn/autograd/autograd.hpp"

namespace edgewise::test {

struct Shape {
  int64_t rows, cols;
};
using Flat = std::vector<double>;

struct GradCase {
  std::string name;
  std::vector<Shape> inputs;
  std::vector<bool> differentiable;  // per input; default all
  // The engine's forward on Variables (inputs require grad).
  std::function<gnn::Variable(const std::vector<gnn::Variable>&)> forward;
  // The reference forward in double: flat row-major inputs -> flat output.
  std::function<Flat(const std::vector<Flat>&)> reference;
  double input_lo = -1, input_hi = 1;
  double forward_tol = 1e-5;
  double grad_tol = 2e-3;
};

inline void check_gradients(const GradCase& c, Device device, uint64_t seed) {
  SCOPED_TRACE("gradcheck " + c.name);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(c.input_lo, c.input_hi);
  std::vector<Flat> x64;
  std::vector<gnn::Variable> vars;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Shape s = c.inputs[i];
    Flat v(static_cast<size_t>(s.rows * s.cols));
    for (double& e : v) e = static_cast<float>(dist(rng));  // representable in float
    std::vector<float> f(v.begin(), v.end());
    const bool diff = c.differentiable.empty() || c.differentiable[i];
    vars.emplace_back(gnn::Tensor::from_host(f, s.rows, s.cols, device), diff);
    x64.push_back(v);
  }
  gnn::Variable y = c.forward(vars);
  const Flat y_ref = c.reference(x64);
  const std::vector<float> y_got = y.value().to_host_vector();
  ASSERT_EQ(y_got.size(), y_ref.size()) << "forward output size";
  for (size_t i = 0; i < y_ref.size(); ++i) {
    ASSERT_NEAR(y_got[i], y_ref[i], c.forward_tol * std::max(1.0, std::fabs(y_ref[i]))) << "forward element " << i;
  }
  // Projection weights r: loss = sum(r * y).
  Flat r(y_ref.size());
  for (double& e : r) e = static_cast<float>(dist(rng));
  std::vector<float> rf(r.begin(), r.end());
  y.backward(gnn::Tensor::from_host(rf, y.rows(), y.cols(), device));
  auto loss = [&](const std::vector<Flat>& xs) {
    const Flat out = c.reference(xs);
    double total = 0;
    for (size_t i = 0; i < out.size(); ++i) total += r[i] * out[i];
    return total;
  };
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!(c.differentiable.empty() || c.differentiable[i])) continue;
    ASSERT_TRUE(vars[i].has_grad()) << "input " << i << " got no gradient";
    const std::vector<float> analytic = vars[i].grad().to_host_vector();
    std::vector<Flat> probe = x64;
    for (size_t j = 0; j < probe[i].size(); ++j) {
      const double h = 1e-6 * std::max(1.0, std::fabs(x64[i][j]));
      probe[i][j] = x64[i][j] + h;
      const double up = loss(probe);
      probe[i][j] = x64[i][j] - h;
      const double down = loss(probe);
      probe[i][j] = x64[i][j];
      const double numeric = (up - down) / (2 * h);
      ASSERT_NEAR(analytic[j], numeric, c.grad_tol * std::max(1.0, std::fabs(numeric)))
          << "d loss / d input" << i << "[" << j << "]";
    }
  }
}

}  // namespace edgewise::test
