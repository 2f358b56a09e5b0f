// edge_softmax and its backward against the long-double oracle: heads, degree regimes
// (empty rows, singletons, one hub, power law), float and double, extreme scores (1e4,
// -1e30, huge spreads) for stability, rows summing to one, the backward against the
// oracle and finite differences, empty graphs, poisoned outputs, bad input,
// reproducibility across thread counts.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "edge_softmax_ref.hpp"
#include "edgewise/kernels/edge_softmax.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using EdgeSoftmaxTest = DeviceTest;

template <class T>
std::vector<T> run_forward(Device device, const std::vector<int64_t>& offsets, const std::vector<T>& scores,
                           int64_t H) {
  const int64_t E = static_cast<int64_t>(scores.size()) / H;
  auto d_offsets = to_device(offsets, device);
  auto d_scores = to_device(scores, device);
  auto out = poisoned<T>(E * H, device);
  Context ctx(device);
  edge_softmax<T>(d_offsets.view(), d_scores.matrix(E, H), out.matrix(E, H), ctx);
  return out.to_host_vector();
}

template <class T>
std::vector<T> run_backward(Device device, const std::vector<int64_t>& offsets, const std::vector<T>& y,
                            const std::vector<T>& g, int64_t H) {
  const int64_t E = static_cast<int64_t>(y.size()) / H;
  auto d_offsets = to_device(offsets, device);
  auto d_y = to_device(y, device);
  auto d_g = to_device(g, device);
  auto out = poisoned<T>(E * H, device);
  Context ctx(device);
  edge_softmax_backward<T>(d_offsets.view(), d_y.matrix(E, H), d_g.matrix(E, H), out.matrix(E, H), ctx);
  return out.to_host_vector();
}

template <class T>
std::vector<double> as_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Every nonempty (row, head) of a softmax output sums to 1.
template <class T>
::testing::AssertionResult rows_sum_to_one(const std::vector<int64_t>& offsets, const std::vector<T>& y, int64_t H,
                                           double tol) {
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    for (int64_t h = 0; h < H; ++h) {
      if (offsets[v] == offsets[v + 1]) continue;
      double total = 0;
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) total += static_cast<double>(y[e * H + h]);
      if (!(std::fabs(total - 1.0) <= tol)) return ::testing::AssertionFailure() << "row " << v << " head " << h << " sums to " << total;
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
void check(Device device, const std::vector<int64_t>& offsets, const std::vector<T>& scores, int64_t H,
           std::mt19937_64& rng, const std::string& label) {
  SCOPED_TRACE(label + " H=" + std::to_string(H) + (sizeof(T) == 4 ? " float" : " double"));
  const double tol = sizeof(T) == 4 ? 2e-6 : 1e-13;
  const auto y = run_forward(device, offsets, scores, H);
  for (const T& v : y) ASSERT_TRUE(std::isfinite(static_cast<double>(v))) << "non-finite probability";
  EXPECT_TRUE(close_to(as_double(y), reference::edge_softmax_ref(offsets, scores, H), {}, tol * 4, tol));
  EXPECT_TRUE(rows_sum_to_one(offsets, y, H, tol * 64));
  const auto g = random_values<T>(rng, static_cast<int64_t>(y.size()), -1, 1);
  const auto grad = run_backward(device, offsets, y, g, H);
  EXPECT_TRUE(close_to(as_double(grad), reference::edge_softmax_backward_ref(offsets, y, g, H), {}, tol * 4, tol * 4));
}

template <class T>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const Regime regimes[] = {Regime::Uniform,  Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,   Regime::PowerLaw, Regime::SparseEmpty};
  for (Regime regime : regimes) {
    for (int64_t H : {1, 2, 8, 33}) {
      const auto offsets = offsets_from_lengths(segment_lengths(rng, regime, 57, 6));
      const auto scores = random_values<T>(rng, offsets.back() * H, -10, 10);
      check<T>(device, offsets, scores, H, rng, regime_name(regime));
    }
  }
}

TEST_P(EdgeSoftmaxTest, FloatMatchesReferenceInEveryRegime) { sweep<float>(device(), 201); }
TEST_P(EdgeSoftmaxTest, DoubleMatchesReferenceInEveryRegime) { sweep<double>(device(), 202); }

TEST_P(EdgeSoftmaxTest, ExtremeScoresStayFiniteAndNormalised) {
  auto rng = rng_for(203);
  // Scores around 1e4 overflow a naive exp; -1e30 underflow; mixed spreads put the max
  // late in a row and early.
  const std::vector<int64_t> offsets{0, 3, 3, 7, 8, 108};
  std::vector<float> scores{1e4f, 1e4f + 1, 1e4f - 3, -1e30f, -1e30f, -1e30f + 1e24f, -1e30f, 5e3f};
  for (int i = 0; i < 100; ++i) scores.push_back(static_cast<float>(i % 2 ? 1e4 - i : -1e4 + i));
  check<float>(device(), offsets, scores, 1, rng, "extreme");
  const auto y = run_forward<float>(device(), offsets, scores, 1);
  EXPECT_NEAR(y[1], 1.0 / (1.0 + std::exp(-1.0) + std::exp(-4.0)), 1e-6);
  EXPECT_EQ(y[7], 1.0f) << "a singleton row gets probability 1";
}

TEST_P(EdgeSoftmaxTest, LargeHubMatchesReference) {
  auto rng = rng_for(204);
  const std::vector<int64_t> offsets{0, 1, 20001, 20001, 20003};
  const auto scores = random_values<float>(rng, offsets.back() * 2, -30, 30);
  check<float>(device(), offsets, scores, 2, rng, "hub");
}

TEST_P(EdgeSoftmaxTest, EmptyGraphWritesNothing) {
  for (const std::vector<int64_t>& offsets : {std::vector<int64_t>{0}, std::vector<int64_t>{0, 0, 0}}) {
    EXPECT_TRUE(run_forward<float>(device(), offsets, {}, 3).empty());
    EXPECT_TRUE(run_backward<float>(device(), offsets, {}, {}, 3).empty());
  }
}

TEST_P(EdgeSoftmaxTest, NaNScoreMakesItsRowNaNOnly) {
  const std::vector<int64_t> offsets{0, 2, 4};
  const auto y = run_forward<float>(device(), offsets, {1.0f, std::nanf(""), 0.0f, 0.0f}, 1);
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  EXPECT_EQ(y[2], 0.5f);
  EXPECT_EQ(y[3], 0.5f);
  // +inf: exp(inf - inf) is NaN, so the whole (row, head) is NaN, as torch.softmax's.
  const float inf = std::numeric_limits<float>::infinity();
  const auto z = run_forward<float>(device(), offsets, {inf, 1.0f, -inf, -inf}, 1);
  EXPECT_TRUE(std::isnan(z[0]) && std::isnan(z[1]));
  EXPECT_TRUE(std::isnan(z[2]) && std::isnan(z[3])) << "all -inf: 0 / 0";
}

TEST_P(EdgeSoftmaxTest, BackwardMatchesFiniteDifferences) {
  auto rng = rng_for(205);
  const std::vector<int64_t> offsets{0, 3, 3, 4, 9};
  const int64_t H = 2, E = 9;
  const auto s = random_values<double>(rng, E * H, -3, 3);
  const auto r = random_values<double>(rng, E * H, -1, 1);
  const auto y = run_forward<double>(device(), offsets, s, H);
  const auto grad = run_backward<double>(device(), offsets, y, r, H);
  for (int64_t i = 0; i < E * H; ++i) {
    auto probe = s;
    auto loss = [&](double delta) {
      probe[i] = s[i] + delta;
      const auto p = reference::edge_softmax_ref(offsets, probe, H);
      double total = 0;
      for (size_t j = 0; j < p.size(); ++j) total += r[j] * p[j];
      return total;
    };
    const double h = 1e-6;
    EXPECT_NEAR(grad[i], (loss(h) - loss(-h)) / (2 * h), 1e-7) << "element " << i;
  }
}

TEST_P(EdgeSoftmaxTest, BackwardMayOverwriteItsGradient) {
  auto rng = rng_for(206);
  const std::vector<int64_t> offsets{0, 40, 41, 100};
  const auto y = run_forward<float>(device(), offsets, random_values<float>(rng, 100 * 3, -5, 5), 3);
  const auto g = random_values<float>(rng, 100 * 3, -1, 1);
  const auto expected = run_backward<float>(device(), offsets, y, g, 3);
  auto d_offsets = to_device(offsets, device());
  auto d_y = to_device(y, device());
  auto d_g = to_device(g, device());
  Context ctx(device());
  edge_softmax_backward<float>(d_offsets.view(), d_y.matrix(100, 3), d_g.matrix(100, 3), d_g.matrix(100, 3), ctx);
  EXPECT_TRUE(equal_exactly(d_g.to_host_vector(), expected));
}

TEST_P(EdgeSoftmaxTest, ResultsAreBitwiseReproducibleAcrossThreadCounts) {
  auto rng = rng_for(207);
  const auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::PowerLaw, 5000, 30));
  const auto scores = random_values<float>(rng, offsets.back() * 4, -20, 20);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = run_forward<float>(device(), offsets, scores, 4);
  omp_set_num_threads(std::max(2, threads));
  const auto many = run_forward<float>(device(), offsets, scores, 4);
  omp_set_num_threads(threads);
  EXPECT_TRUE(equal_exactly(one, many));
}

TEST_P(EdgeSoftmaxTest, BadInputThrowsNamingTheArgumentAndLeavesOutputsUntouched) {
  const Device dev = device();
  struct Bad {
    std::vector<int64_t> offsets;
    int64_t out_rows, out_cols;
    bool backward;
    std::string needle;
  };
  const std::vector<Bad> cases = {
      {{1, 2, 4}, 4, 2, false, "edge_softmax: offsets[0] (1) must be 0"},
      {{0, 3, 2, 4}, 4, 2, false, "edge_softmax: offsets[2] (2)"},
      {{0, 2, 3}, 4, 2, false, "must equal the number of rows (4)"},
      {{}, 4, 2, false, "edge_softmax: offsets must have S + 1 >= 1 elements"},
      {{0, 2, 4}, 4, 3, false, "edge_softmax: out must be [4, 2] (got [4, 3])"},
      {{0, 2, 4}, 3, 2, true, "edge_softmax_backward: grad_scores must be [4, 2] (got [3, 2])"},
      {{0, 5, 4}, 4, 2, true, "edge_softmax_backward: offsets[1] (5)"},
  };
  auto scores = to_device(std::vector<float>(8, 0.25f), dev);
  auto g = to_device(std::vector<float>(8, 1.0f), dev);
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.needle);
    auto offsets = to_device(c.offsets, dev);
    auto out = poisoned<float>(c.out_rows * c.out_cols, dev);
    const auto before = out.to_host_vector();
    Context ctx(dev);
    try {
      if (c.backward) {
        edge_softmax_backward<float>(offsets.view(), scores.matrix(4, 2), g.matrix(4, 2),
                                     MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), ctx);
      } else {
        edge_softmax<float>(offsets.view(), scores.matrix(4, 2),
                            MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), ctx);
      }
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), before.data(), before.size() * sizeof(float)), 0);
  }
  // In-place forward is refused (the normaliser is read after the first write).
  Context ctx(dev);
  auto offsets = to_device(std::vector<int64_t>{0, 2, 4}, dev);
  EXPECT_THROW(edge_softmax<float>(offsets.view(), scores.matrix(4, 2), scores.matrix(4, 2), ctx),
               std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Devices, EdgeSoftmaxTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
