// Dense ops and their autograd nodes: forward against double references and
// gradients against double-precision finite differences, on every device.
#include <gtest/gtest.h>

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Tensor;
using gnn::Variable;

using GradTest = DeviceTest;

Flat matmul_ref(const Flat& a, const Flat& b, int64_t m, int64_t k, int64_t n) {
  Flat c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

TEST_P(GradTest, Matmul) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 5}, {1, 7, 1}, {6, 1, 3}}) {
    check_gradients({"matmul",
                     {{m, k}, {k, n}},
                     {},
                     [](const std::vector<Variable>& v) { return gnn::matmul(v[0], v[1]); },
                     [=](const std::vector<Flat>& x) { return matmul_ref(x[0], x[1], m, k, n); }},
                    device(), 11);
  }
}

TEST_P(GradTest, AddBiasAddAndScaleBy) {
  check_gradients({"add_bias",
                   {{5, 3}, {1, 3}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::add_bias(v[0], v[1]); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     for (size_t i = 0; i < y.size(); ++i) y[i] += x[1][i % 3];
                     return y;
                   }},
                  device(), 12);
  check_gradients({"add",
                   {{4, 2}, {4, 2}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::add(v[0], v[1]); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     for (size_t i = 0; i < y.size(); ++i) y[i] += x[1][i];
                     return y;
                   }},
                  device(), 13);
  check_gradients({"scale_by",
                   {{4, 3}, {1, 1}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::scale_by(v[0], v[1], 1.0f); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     for (double& e : y) e *= 1.0 + x[1][0];
                     return y;
                   }},
                  device(), 14);
}

TEST_P(GradTest, ReluAwayFromTheKink) {
  GradCase c{"relu",
             {{6, 5}},
             {},
             [](const std::vector<Variable>& v) { return gnn::relu(v[0]); },
             [](const std::vector<Flat>& x) {
               Flat y = x[0];
               for (double& e : y) e = e > 0 ? e : 0;
               return y;
             }};
  c.input_lo = 0.01;  // finite differences are meaningless at 0; test both signs below
  check_gradients(c, device(), 15);
  c.input_lo = -1;
  c.input_hi = -0.01;
  check_gradients(c, device(), 16);
}

Flat log_softmax_ref(const Flat& x, int64_t rows, int64_t cols) {
  Flat y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e300, s = 0;
    for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x[r * cols + c] - mx);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] - mx - std::log(s);
  }
  return y;
}

TEST_P(GradTest, LogSoftmaxAndCrossEntropy) {
  check_gradients({"log_softmax",
                   {{5, 4}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::log_softmax(v[0]); },
                   [](const std::vector<Flat>& x) { return log_softmax_ref(x[0], 5, 4); }},
                  device(), 17);
  const std::vector<int64_t> labels = {2, 0, 3, 3, 1, 0};
  const std::vector<int64_t> rows = {0, 2, 3, 5};
  auto labels_t = gnn::IndexTensor::vector(labels, device());
  auto rows_t = gnn::IndexTensor::vector(rows, device());
  check_gradients({"cross_entropy",
                   {{6, 4}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::cross_entropy(v[0], labels_t, rows_t); },
                   [=](const std::vector<Flat>& x) {
                     Flat lp = log_softmax_ref(x[0], 6, 4);
                     double total = 0;
                     for (int64_t r : rows) total -= lp[r * 4 + labels[r]];
                     return Flat{total / static_cast<double>(rows.size())};
                   },
                   -3, 3},
                  device(), 18);
}

TEST_P(GradTest, BceWithLogits) {
  const std::vector<float> targets = {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0};
  auto targets_t = Tensor::from_host(targets, 4, 3, device());
  auto rows_t = gnn::IndexTensor::vector({0, 1, 3}, device());
  check_gradients({"bce_with_logits",
                   {{4, 3}},
                   {},
                   [=](const std::vector<Variable>& v) { return gnn::bce_with_logits(v[0], targets_t, rows_t); },
                   [=](const std::vector<Flat>& x) {
                     double total = 0;
                     for (int64_t r : {0, 1, 3}) {
                       for (int64_t c = 0; c < 3; ++c) {
                         const double z = x[0][r * 3 + c], t = targets[r * 3 + c];
                         total += std::log1p(std::exp(-std::fabs(z))) + std::max(z, 0.0) - z * t;
                       }
                     }
                     return Flat{total / 9.0};
                   },
                   -4, 4},
                  device(), 19);
}

TEST_P(GradTest, ConcatAndL2Normalize) {
  check_gradients({"concat_cols",
                   {{3, 2}, {3, 4}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::concat_cols(v[0], v[1]); },
                   [](const std::vector<Flat>& x) {
                     Flat y;
                     for (int r = 0; r < 3; ++r) {
                       for (int c = 0; c < 2; ++c) y.push_back(x[0][r * 2 + c]);
                       for (int c = 0; c < 4; ++c) y.push_back(x[1][r * 4 + c]);
                     }
                     return y;
                   }},
                  device(), 20);
  check_gradients({"l2_normalize",
                   {{4, 5}},
                   {},
                   [](const std::vector<Variable>& v) { return gnn::l2_normalize(v[0]); },
                   [](const std::vector<Flat>& x) {
                     Flat y = x[0];
                     for (int r = 0; r < 4; ++r) {
                       double n = 0;
                       for (int c = 0; c < 5; ++c) n += y[r * 5 + c] * y[r * 5 + c];
                       n = std::sqrt(n);
                       for (int c = 0; c < 5; ++c) y[r * 5 + c] /= n;
                     }
                     return y;
                   }},
                  device(), 21);
}

TEST_P(GradTest, DropoutMaskIsSeededScaledAndReusedInBackward) {
  const int64_t n = 20000;
  auto ones = Tensor::full(n, 1, 1.0f, device());
  gnn::Generator gen(7);
  Variable x(ones, true);
  Variable y = gnn::dropout(x, 0.3f, true, gen);
  const auto out = y.value().to_host_vector();
  int64_t kept = 0;
  for (float v : out) {
    ASSERT_TRUE(v == 0.0f || std::fabs(v - 1.0f / 0.7f) < 1e-6f) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / n, 0.7, 0.015);
  // The gradient passes exactly where the value was kept, scaled the same way.
  y.backward(Tensor::full(n, 1, 1.0f, device()));
  EXPECT_EQ(x.grad().to_host_vector(), out);
  // Same seed and stream -> same mask; eval mode and p = 0 are the identity.
  gnn::Generator again(7);
  EXPECT_EQ(gnn::dropout(Variable(ones), 0.3f, true, again).value().to_host_vector(), out);
  EXPECT_EQ(gnn::dropout(Variable(ones), 0.3f, false, again).value().to_host_vector(), ones.to_host_vector());
  // The next call takes a new stream: a different mask.
  EXPECT_NE(gnn::dropout(Variable(ones), 0.3f, true, again).value().to_host_vector(), out);
}

INSTANTIATE_TEST_SUITE_P(Devices, GradTest, testing::ValuesIn(all_devices()), device_name);

TEST(Autograd, SharedInputsAccumulateAndNoGradRecordsNothing) {
  Variable a(Tensor::from_host(std::vector<float>{1, 2, 3, 4}, 2, 2), true);
  Variable b = gnn::add(a, a);                      // d/da = 2
  Variable c = gnn::matmul(b, a);                   // uses a twice more
  Variable s = gnn::cross_entropy(c, gnn::IndexTensor::vector({0, 1}), gnn::IndexTensor::vector({0, 1}));
  s.backward();
  ASSERT_TRUE(a.has_grad());
  EXPECT_FALSE(c.grad_fn()) << "the tape is released after backward";
  {
    gnn::NoGradGuard guard;
    Variable d = gnn::add(a, a);
    EXPECT_FALSE(d.requires_grad());
    EXPECT_FALSE(d.grad_fn());
  }
  EXPECT_TRUE(gnn::grad_enabled());
  Variable constant(Tensor::full(1, 1, 1.0f));
  EXPECT_THROW(constant.backward(), std::invalid_argument);
}

// backward() moves intermediate gradients into pass-through nodes (add, add_bias);
// the output's gradient, the caller's seed and a gradient that two inputs share must
// still come out right and unaliased.
TEST(Autograd, PassThroughGradientsMoveWithoutAliasing) {
  Variable x(Tensor::from_host(std::vector<float>{1, 2, 3, 4, 5, 6}, 3, 2), true);
  Variable bias(Tensor::from_host(std::vector<float>{0.5f, -1}, 1, 2), true);
  Variable h = gnn::relu(x);                        // x > 0: dh/dx = 1
  Variable z = gnn::add_bias(h, bias);
  Variable out = gnn::add(gnn::add(z, h), gnn::add(h, h));  // d out / d h = 4
  const std::vector<float> seed_values{1, -2, 3, 0.25f, -1, 2};
  Tensor seed = Tensor::from_host(seed_values, 3, 2);
  out.backward(seed);
  EXPECT_EQ(seed.to_host_vector(), seed_values) << "the seed is the caller's";
  EXPECT_EQ(out.grad().to_host_vector(), seed_values) << "the output keeps its gradient";
  std::vector<float> want_x(seed_values);
  for (float& v : want_x) v *= 4;
  EXPECT_EQ(x.grad().to_host_vector(), want_x);
  EXPECT_EQ(bias.grad().to_host_vector(), (std::vector<float>{1 + 3 - 1, -2 + 0.25f + 2}));
  EXPECT_NE(x.grad().data(), out.grad().data());
}

TEST(Ops, ShapeErrorsNameTheArguments) {
  Tensor a(2, 3), b(4, 5), c(2, 5);
  try {
    gnn::ops::matmul(a, false, b, false, c);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("matmul: inner dimensions differ"), std::string::npos) << e.what();
  }
  Tensor bias(1, 4);
  EXPECT_THROW(gnn::ops::add_row_vector(a, bias), std::invalid_argument);
  Tensor good_bias(1, 3), wrong_out(3, 3);
  EXPECT_THROW(gnn::ops::add_row_vector(a, good_bias, wrong_out), std::invalid_argument);
  EXPECT_THROW(gnn::ops::dropout(a, 1.0f, 0, 0, a), std::invalid_argument);
}

TEST(Ops, ColumnSumsAreIndependentOfThreadCount) {
  auto rng = rng_for(30);
  auto values = random_values<float>(rng, 20000 * 3, -1, 1);
  auto x = Tensor::from_host(values, 20000, 3);
  Tensor one(1, 3), two(1, 3);
  omp_set_num_threads(1);
  gnn::ops::column_sums(x, one);
  omp_set_num_threads(2);
  gnn::ops::column_sums(x, two);
  EXPECT_EQ(one.to_host_vector(), two.to_host_vector());
}

// log_softmax_rows and its backward against a double reference at widths around the
// vector lengths (tails), with large spreads (exps that underflow to 0), -inf entries
// and the rows that must come out NaN (a NaN, +inf or only -inf), in place too.
TEST(Ops, LogSoftmaxRowsMatchTheDoubleReference) {
  auto rng = rng_for(31);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t cols : {1, 3, 4, 7, 16, 17, 40}) {
    const int64_t rows = 64;
    auto values = random_values<float>(rng, rows * cols, -30, 30);
    auto grads = random_values<float>(rng, rows * cols, -1, 1);
    values[0] = -inf;                               // row 0: one -inf entry (exp 0)
    values[cols] = 1e30f;                           // row 1: one huge entry, the rest underflow
    values[2 * cols + cols - 1] = std::nanf("");    // row 2: NaN
    values[3 * cols] = inf;                         // row 3: +inf
    for (int64_t c = 0; c < cols; ++c) values[4 * cols + c] = -inf;  // row 4: only -inf
    auto x = Tensor::from_host(values, rows, cols);
    Tensor y(rows, cols);
    gnn::ops::log_softmax_rows(x, y);
    auto in_place = Tensor::from_host(values, rows, cols);
    gnn::ops::log_softmax_rows(in_place, in_place);
    const auto got = y.to_host_vector();
    EXPECT_EQ(std::memcmp(got.data(), in_place.to_host_vector().data(), got.size() * sizeof(float)), 0) << cols;
    Tensor gx(rows, cols);
    gnn::ops::log_softmax_backward(y, Tensor::from_host(grads, rows, cols), gx);
    const auto got_grad = gx.to_host_vector();
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -inf, sum = 0, gsum = 0;
      for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, static_cast<double>(values[r * cols + c]));
      for (int64_t c = 0; c < cols; ++c) sum += std::exp(static_cast<double>(values[r * cols + c]) - mx);
      for (int64_t c = 0; c < cols; ++c) gsum += grads[r * cols + c];
      const bool nan_row = r == 2 || r == 3 || r == 4 || (r == 0 && cols == 1);  // cols 1: row 0 is only -inf
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = r * cols + c;
        if (nan_row) {
          EXPECT_TRUE(std::isnan(got[i])) << "cols " << cols << " row " << r << " col " << c << ": " << got[i];
          continue;
        }
        const double want = values[i] - mx - std::log(sum);
        if (std::isinf(want)) {
          EXPECT_EQ(got[i], static_cast<float>(want)) << cols << " " << r << " " << c;
        } else {
          EXPECT_NEAR(got[i], want, 1e-5 * std::max(1.0, std::abs(want))) << cols << " " << r << " " << c;
        }
        const double want_grad = grads[i] - std::exp(want) * gsum;
        EXPECT_NEAR(got_grad[i], want_grad, 1e-5 * std::max(1.0, std::abs(gsum))) << cols << " " << r << " " << c;
      }
    }
  }
}

// add_row_vector out of place: x + bias against a naive loop, x untouched, the same
// bits as the in-place form (y aliasing x), empty tensors, a wrong bias untouched output.
TEST(Ops, AddRowVectorOutOfPlaceMatchesInPlaceAndLeavesXAlone) {
  auto rng = rng_for(32);
  for (int64_t rows : {0, 1, 1000, 70001}) {
    for (int64_t cols : {1, 7, 64}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      const auto values = random_values<float>(rng, rows * cols, -5, 5);
      const auto bias_values = random_values<float>(rng, cols, -1, 1);
      const auto x = Tensor::from_host(values, rows, cols);
      const auto bias = Tensor::from_host(bias_values, 1, cols);
      Tensor y = Tensor::full(rows, cols, std::nanf(""));
      gnn::ops::add_row_vector(x, bias, y);
      EXPECT_EQ(x.to_host_vector(), values) << "x is an input";
      const auto got = y.to_host_vector();
      for (int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(got[i], values[i] + bias_values[i % cols]) << i;
      Tensor in_place = Tensor::from_host(values, rows, cols);
      gnn::ops::add_row_vector(in_place, bias);
      EXPECT_EQ(in_place.to_host_vector(), got);
    }
  }
  const auto x = Tensor::full(2, 3, 1.0f);
  Tensor y = Tensor::full(2, 3, 7.0f);
  EXPECT_THROW(gnn::ops::add_row_vector(x, Tensor::full(1, 2, 1.0f), y), std::invalid_argument);
  EXPECT_EQ(y.to_host_vector(), std::vector<float>(6, 7.0f)) << "a rejected call writes nothing";
}

// Zero rows: nothing to compute, nothing written, no error.
TEST(Ops, LogSoftmaxOfNoRowsIsEmpty) {
  Tensor x(0, 5), y(0, 5), g(0, 5);
  gnn::ops::log_softmax_rows(x, y);
  gnn::ops::log_softmax_backward(y, g, g);
  EXPECT_EQ(y.numel(), 0);
}

TEST(Ops, AdamAndSgdMatchTheirDefinitions) {
  // One Adam step from m = v = 0 moves each weight by lr * sign(g) (bias-corrected).
  Tensor p = Tensor::from_host(std::vector<float>{1, -2}, 1, 2);
  Tensor g = Tensor::from_host(std::vector<float>{0.5f, -3}, 1, 2);
  Tensor m = Tensor::zeros(1, 2), v = Tensor::zeros(1, 2);
  gnn::ops::adam_update(p, g, m, v, {0.1f, 0.9f, 0.999f, 1e-8f, 0.0f, false, 1});
  EXPECT_NEAR(p.to_host_vector()[0], 0.9f, 1e-5);
  EXPECT_NEAR(p.to_host_vector()[1], -1.9f, 1e-5);
  // SGD with momentum: the buffer starts as the gradient.
  Tensor q = Tensor::from_host(std::vector<float>{1}, 1, 1);
  Tensor buf = Tensor::zeros(1, 1);
  Tensor gq = Tensor::from_host(std::vector<float>{2}, 1, 1);
  gnn::ops::sgd_update(q, gq, buf, {0.1f, 0.9f, 0.0f, 0.0f, false, true});
  EXPECT_NEAR(q.to_host_vector()[0], 0.8f, 1e-6);
  gnn::ops::sgd_update(q, gq, buf, {0.1f, 0.9f, 0.0f, 0.0f, false, false});
  EXPECT_NEAR(buf.to_host_vector()[0], 3.8f, 1e-6);
  EXPECT_NEAR(q.to_host_vector()[0], 0.8f - 0.38f, 1e-6);
}

}  // namespace
}  // namespace edgewise::test
