// scatter_softmax against a double-precision oracle written here (group max, sum of
// exponentials, torch_scatter's formulas), with empty groups, one huge group, -inf,
// NaN, every thread count, the 16-bit types, and its argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/scatter_softmax.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using ScatterSoftmaxTest = DeviceTest;

std::vector<double> softmax_oracle(const std::vector<double>& v, int64_t C, const std::vector<int64_t>& index,
                                   int64_t S, SoftmaxKind kind, double eps) {
  const int64_t M = static_cast<int64_t>(index.size());
  std::vector<double> mx(S * C, -std::numeric_limits<double>::infinity()), z(S * C, 0.0), out(M * C);
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      double& m = mx[index[r] * C + c];
      const double x = v[r * C + c];
      m = (std::isnan(x) || std::isnan(m)) ? std::nan("") : std::max(m, x);
    }
  }
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) z[index[r] * C + c] += std::exp(v[r * C + c] - mx[index[r] * C + c]);
  }
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      const int64_t g = index[r] * C + c;
      const double recentred = v[r * C + c] - mx[g];
      out[r * C + c] = kind == SoftmaxKind::Softmax ? std::exp(recentred) / z[g] : recentred - std::log(z[g] + eps);
    }
  }
  return out;
}

template <class T>
std::vector<T> run_softmax(Device device, const std::vector<T>& values, int64_t C, const std::vector<int64_t>& index,
                           int64_t S, SoftmaxKind kind, double eps) {
  const int64_t M = static_cast<int64_t>(index.size());
  auto d_values = to_device(values, device);
  auto d_index = to_device(index, device);
  auto d_out = poisoned<T>(M * C, device);
  Context ctx(device);
  scatter_softmax<T, int64_t>(d_values.matrix(M, C), d_index.view(), S, kind, eps, d_out.matrix(M, C), ctx);
  return d_out.to_host_vector();
}

// The transposed entry point on values [M, C] given as [C, M]; returns [M, C].
template <class T>
std::vector<T> run_softmax_transposed(Device device, const std::vector<T>& values, int64_t C,
                                      const std::vector<int64_t>& index, int64_t S, SoftmaxKind kind, double eps) {
  const int64_t M = static_cast<int64_t>(index.size());
  std::vector<T> values_t(values.size());
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) values_t[c * M + r] = values[r * C + c];
  }
  auto d_values = to_device(values_t, device);
  auto d_index = to_device(index, device);
  auto d_out = poisoned<T>(M * C, device);
  Context ctx(device);
  scatter_softmax_transposed<T, int64_t>(d_values.matrix(C, M), d_index.view(), S, kind, eps, d_out.matrix(C, M),
                                         ctx);
  const auto out_t = d_out.to_host_vector();
  std::vector<T> out(out_t.size());
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) out[r * C + c] = out_t[c * M + r];
  }
  return out;
}

// Compares elementwise within rtol / atol; NaN must meet NaN.
template <class T>
::testing::AssertionResult near(const std::vector<T>& got, const std::vector<double>& want, double rtol,
                                double atol) {
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(static_cast<float>(got[i])), w = want[i];
    if constexpr (std::is_same_v<T, double>) {
      if (std::isnan(got[i]) != std::isnan(w) || (!std::isnan(w) && std::abs(got[i] - w) > atol + rtol * std::abs(w))) {
        return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs " << w;
      }
      continue;
    }
    if (std::isnan(g) != std::isnan(w) || (!std::isnan(w) && std::abs(g - w) > atol + rtol * std::abs(w))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << g << " vs " << w;
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
void sweep(Device device, uint64_t salt, double rtol, double atol) {
  auto rng = rng_for(salt);
  for (int64_t C : {1, 3, 16}) {
    for (auto [M, S] : {std::pair<int64_t, int64_t>{640, 5}, {300, 1000}, {5000, 1}}) {  // 1 group: one huge segment
      std::uniform_real_distribution<double> value(-30, 30);
      std::vector<double> v(static_cast<size_t>(M * C));
      for (auto& x : v) x = static_cast<double>(static_cast<float>(T(static_cast<float>(value(rng)))));
      std::vector<T> values(v.size());
      for (size_t i = 0; i < v.size(); ++i) values[i] = T(static_cast<float>(v[i]));
      std::vector<int64_t> index(static_cast<size_t>(M));
      std::uniform_int_distribution<int64_t> any(0, S - 1);
      for (auto& i : index) i = any(rng) / 2 * 2 % S;  // odd groups stay empty
      for (SoftmaxKind kind : {SoftmaxKind::Softmax, SoftmaxKind::LogSoftmax}) {
        SCOPED_TRACE(detail::concat("M=", M, " C=", C, " S=", S, " log=", kind == SoftmaxKind::LogSoftmax));
        const auto want = softmax_oracle(v, C, index, S, kind, 1e-12);
        EXPECT_TRUE(near(run_softmax(device, values, C, index, S, kind, 1e-12), want, rtol, atol));
        EXPECT_TRUE(near(run_softmax_transposed(device, values, C, index, S, kind, 1e-12), want, rtol, atol))
            << "(transposed)";
      }
    }
  }
}

TEST_P(ScatterSoftmaxTest, FloatMatchesTheOracle) { sweep<float>(device(), 1, 1e-5, 1e-6); }
TEST_P(ScatterSoftmaxTest, DoubleMatchesTheOracle) { sweep<double>(device(), 2, 1e-12, 1e-14); }
TEST_P(ScatterSoftmaxTest, BFloat16MatchesTheOracle) { sweep<BFloat16>(device(), 3, 2e-2, 2e-2); }
TEST_P(ScatterSoftmaxTest, Float16MatchesTheOracle) { sweep<Half>(device(), 4, 4e-3, 4e-3); }

TEST_P(ScatterSoftmaxTest, EveryThreadCountGivesTheSameBits) {
  auto rng = rng_for(5);
  const int64_t M = 20000, C = 8, S = 700;
  auto values = random_values<float>(rng, M * C, -5, 5);
  std::vector<int64_t> index(M);
  std::uniform_int_distribution<int64_t> any(0, S - 1);
  for (auto& i : index) i = any(rng);
  const int saved = omp_get_max_threads();
  std::vector<double> v(values.begin(), values.end());
  const auto want = softmax_oracle(v, C, index, S, SoftmaxKind::Softmax, 0);
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const auto a = run_softmax(device(), values, C, index, S, SoftmaxKind::Softmax, 0);
    const auto b = run_softmax(device(), values, C, index, S, SoftmaxKind::Softmax, 0);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << "threads=" << threads;
    EXPECT_TRUE(near(a, want, 1e-5, 1e-7)) << "threads=" << threads;
  }
  omp_set_num_threads(saved);
}

// Stable for large magnitudes; -inf contributes 0 (log: -inf); a NaN poisons its
// group's column only; +inf gives NaN (inf - inf), as torch_scatter's formula does.
TEST_P(ScatterSoftmaxTest, ExtremesFollowTorchScatter) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Groups: 0 = {1e30, 1e30 - big, -inf}, 1 = {NaN, 2}, 2 = {inf, 0}, 3 = {-1e4, -1e4}
  const std::vector<float> values = {1e30f, 9e29f, -inf, nan, 2.0f, inf, 0.0f, -1e4f, -1e4f};
  const std::vector<int64_t> index = {0, 0, 0, 1, 1, 2, 2, 3, 3};
  const auto sm = run_softmax(device(), values, 1, index, 4, SoftmaxKind::Softmax, 1e-12);
  EXPECT_EQ(sm[0], 1.0f);
  EXPECT_EQ(sm[1], 0.0f);
  EXPECT_EQ(sm[2], 0.0f);
  EXPECT_TRUE(std::isnan(sm[3]) && std::isnan(sm[4]));
  EXPECT_TRUE(std::isnan(sm[5]));
  EXPECT_FLOAT_EQ(sm[7], 0.5f);
  EXPECT_FLOAT_EQ(sm[8], 0.5f);
  const auto lsm = run_softmax(device(), values, 1, index, 4, SoftmaxKind::LogSoftmax, 1e-12);
  EXPECT_EQ(lsm[0], 0.0f);
  EXPECT_EQ(lsm[2], -inf);
  EXPECT_FLOAT_EQ(lsm[7], std::log(0.5f));
  const auto sm_t = run_softmax_transposed(device(), values, 1, index, 4, SoftmaxKind::Softmax, 1e-12);
  EXPECT_EQ(std::memcmp(sm_t.data(), sm.data(), sm.size() * sizeof(float)), 0) << "(transposed, C = 1)";
}

TEST_P(ScatterSoftmaxTest, NoRowsIsANoOp) {
  EXPECT_TRUE(run_softmax(device(), std::vector<float>{}, 4, std::vector<int64_t>{}, 3, SoftmaxKind::Softmax, 0).empty());
}

TEST_P(ScatterSoftmaxTest, BadInputThrowsNamingTheArgumentAndLeavesOutUntouched) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);  // [3, 2]
  struct Case {
    std::vector<int64_t> index;
    int64_t S, out_rows;
    double eps;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{0, 1, 4}, 4, 3, 0, "index[2] (4) must lie in [0, 4)"},
      {{0, -1, 1}, 4, 3, 0, "index[1] (-1) must lie in [0, 4)"},
      {{0, 1}, 4, 3, 0, "index.size() (2) must equal values.rows() (3)"},
      {{0, 1, 2}, 4, 2, 0, "out must be [3, 2] like values"},
      {{0, 1, 2}, -1, 3, 0, "the number of groups S (-1) must be >= 0"},
      {{0, 1, 2}, 4, 3, -1, "eps (-1) must be >= 0"},
  };
  for (const Case& c : cases) {
    auto index = to_device(c.index, dev);
    auto out = poisoned<float>(c.out_rows * 2, dev);
    const auto before = out.to_host_vector();
    Context ctx(dev);
    try {
      scatter_softmax<float, int64_t>(values.matrix(3, 2), index.view(), c.S, SoftmaxKind::Softmax, c.eps,
                                      MatrixView<float>(out.data(), c.out_rows, 2, dev), ctx);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scatter_softmax"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), before.data(), before.size() * sizeof(float)), 0)
        << "out changed for case '" << c.needle << "'";
  }
}

// logsumexp per group and column, both layouts, against the oracle's max and sum:
// empty and all -inf groups give 0, a NaN element NaN.
TEST_P(ScatterSoftmaxTest, LogSumExpMatchesTheOracleInBothLayouts) {
  auto rng = rng_for(7);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t C : {1, 5}) {
    const int64_t M = 3000, S = 41;
    std::vector<double> v(static_cast<size_t>(M * C));
    std::uniform_real_distribution<double> value(-40, 40);
    for (auto& x : v) x = static_cast<float>(value(rng));
    std::vector<int64_t> index(M);
    std::uniform_int_distribution<int64_t> any(0, S - 4);  // groups S-3 .. S-1 empty
    for (auto& i : index) i = any(rng);
    index[0] = index[1] = S - 3;  // group S-3: all -inf
    for (int64_t c = 0; c < C; ++c) v[0 * C + c] = v[1 * C + c] = -inf;
    v[2 * C] = std::nan("");  // column 0 of index[2]'s group: NaN
    std::vector<double> want(S * C);
    for (int64_t g = 0; g < S; ++g) {
      for (int64_t c = 0; c < C; ++c) {
        double m = -inf, z = 0;
        bool nan = false, any_row = false;
        for (int64_t r = 0; r < M; ++r) {
          if (index[r] != g) continue;
          any_row = true;
          nan = nan || std::isnan(v[r * C + c]);
          m = std::max(m, v[r * C + c]);
        }
        for (int64_t r = 0; r < M; ++r) {
          if (index[r] != g) continue;
          const double e = std::exp(v[r * C + c] - m);
          z += std::isnan(e) ? 0 : e;
        }
        want[g * C + c] = nan ? std::nan("") : (!any_row || z == 0) ? 0.0 : std::log(z + 1e-12) + m;
      }
    }
    const std::vector<float> values(v.begin(), v.end());
    std::vector<float> values_t(values.size());
    for (int64_t r = 0; r < M; ++r) {
      for (int64_t c = 0; c < C; ++c) values_t[c * M + r] = values[r * C + c];
    }
    for (bool transposed : {false, true}) {
      auto d_values = to_device(transposed ? values_t : values, device());
      auto d_index = to_device(index, device());
      auto d_out = poisoned<float>(S * C, device());
      Context ctx(device());
      const auto view = transposed ? d_values.matrix(C, M) : d_values.matrix(M, C);
      scatter_logsumexp<float, int64_t>(view, d_index.view(), S, 1e-12,
                                        transposed ? d_out.matrix(C, S) : d_out.matrix(S, C), transposed, ctx);
      auto got = d_out.to_host_vector();
      if (transposed) {
        std::vector<float> back(got.size());
        for (int64_t g = 0; g < S; ++g) {
          for (int64_t c = 0; c < C; ++c) back[g * C + c] = got[c * S + g];
        }
        got = back;
      }
      EXPECT_TRUE(near(got, want, 1e-5, 1e-5)) << "C=" << C << " transposed=" << transposed;
    }
  }
}

// Group max and sum arrays beyond 32 MiB: the CPU's grouped pass (rows sorted by
// group, each group in one visit). Half the groups empty, a hub group, -inf rows and a
// NaN; the same bits at any thread count.
TEST_P(ScatterSoftmaxTest, GroupStatesBeyondTheLastLevelCacheMatchTheOracle) {
  constexpr int64_t M = 120000, C = 64, S = 70000;
  const double inf = std::numeric_limits<double>::infinity();
  auto rng = rng_for(0x5e7);
  std::uniform_real_distribution<double> value(-30, 30);
  std::vector<double> v(static_cast<size_t>(M * C));
  for (auto& x : v) x = static_cast<float>(value(rng));
  std::vector<int64_t> index(static_cast<size_t>(M));
  std::uniform_int_distribution<int64_t> any(0, S - 1);
  for (int64_t r = 0; r < M; ++r) index[r] = r % 50 == 0 ? 4 : any(rng) / 2 * 2;  // group 4: a hub of 2400 rows
  for (int64_t c = 0; c < C; ++c) v[7 * C + c] = -inf;
  v[11 * C + 3] = std::nan("");
  const std::vector<float> values(v.begin(), v.end());
  // logsumexp oracle: NaN in a column -> NaN; empty or all -inf -> 0.
  std::vector<double> mx(S * C, -inf), z(S * C, 0.0), lse(S * C);
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      double& m = mx[index[r] * C + c];
      m = std::isnan(v[r * C + c]) || std::isnan(m) ? std::nan("") : std::max(m, v[r * C + c]);
    }
  }
  for (int64_t r = 0; r < M; ++r) {
    for (int64_t c = 0; c < C; ++c) {
      const double e = std::exp(v[r * C + c] - mx[index[r] * C + c]);
      z[index[r] * C + c] += std::isnan(e) ? 0 : e;
    }
  }
  for (int64_t i = 0; i < S * C; ++i) lse[i] = std::isnan(mx[i]) ? std::nan("") : z[i] == 0 ? 0.0 : std::log(z[i] + 1e-12) + mx[i];
  const auto run_logsumexp = [&] {
    auto d_values = to_device(values, device());
    auto d_index = to_device(index, device());
    auto d_out = poisoned<float>(S * C, device());
    Context ctx(device());
    scatter_logsumexp<float, int64_t>(d_values.matrix(M, C), d_index.view(), S, 1e-12, d_out.matrix(S, C), false, ctx);
    return d_out.to_host_vector();
  };
  const int saved = omp_get_max_threads();
  std::vector<float> first[3];
  for (int threads : {2, 1, 3}) {
    omp_set_num_threads(threads);
    SCOPED_TRACE(detail::concat("threads=", threads));
    const auto sm = run_softmax(device(), values, C, index, S, SoftmaxKind::Softmax, 1e-12);
    const auto lsm = run_softmax(device(), values, C, index, S, SoftmaxKind::LogSoftmax, 1e-12);
    const auto lse_got = run_logsumexp();
    EXPECT_TRUE(near(sm, softmax_oracle(v, C, index, S, SoftmaxKind::Softmax, 1e-12), 1e-5, 1e-6));
    EXPECT_TRUE(near(lsm, softmax_oracle(v, C, index, S, SoftmaxKind::LogSoftmax, 1e-12), 1e-5, 1e-5));
    EXPECT_TRUE(near(lse_got, lse, 1e-5, 1e-5)) << "(logsumexp)";
    if (first[0].empty()) {
      first[0] = sm, first[1] = lsm, first[2] = lse_got;
    } else {
      EXPECT_EQ(std::memcmp(sm.data(), first[0].data(), sm.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(lsm.data(), first[1].data(), lsm.size() * sizeof(float)), 0);
      EXPECT_EQ(std::memcmp(lse_got.data(), first[2].data(), lse_got.size() * sizeof(float)), 0);
    }
  }
  omp_set_num_threads(saved);
}

TEST_P(ScatterSoftmaxTest, LogSumExpOfNoRowsIsZeroAndAWrongOutShapeIsAnError) {
  auto d_values = to_device(std::vector<float>{}, device());
  auto d_index = to_device(std::vector<int64_t>{}, device());
  auto d_out = poisoned<float>(6, device());
  Context ctx(device());
  scatter_logsumexp<float, int64_t>(d_values.matrix(0, 2), d_index.view(), 3, 1e-12, d_out.matrix(3, 2), false, ctx);
  EXPECT_EQ(d_out.to_host_vector(), std::vector<float>(6, 0.0f));
  auto values = to_device(std::vector<float>{1, 2, 3, 4}, device());
  auto index = to_device(std::vector<int64_t>{0, 1}, device());
  auto out = poisoned<float>(6, device());
  const auto before = out.to_host_vector();
  try {
    scatter_logsumexp<float, int64_t>(values.matrix(2, 2), index.view(), 2, 1e-12, out.matrix(3, 2), false, ctx);
    ADD_FAILURE() << "no error for a [3, 2] out";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("out must be [2, 2]"), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::memcmp(out.to_host_vector().data(), before.data(), before.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterSoftmaxTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
