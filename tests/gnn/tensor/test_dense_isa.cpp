// The dense ops compiled per ISA level, at every level this build and CPU can run
// (edgewise::set_cpu_isa): the GEMM in all four transpose forms with alpha / beta,
// on shapes that take Eigen's blocked kernels and their remainder paths, against a
// double-precision reference; dropout, bit for bit the same at every level and
// equal to an independent Philox draw.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/cpu_isa.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Tensor;

// c = alpha * op(a) @ op(b) + beta * c0 in double; a stored [ra, ca], b [rb, cb].
std::vector<double> gemm_ref(const std::vector<float>& a, int64_t ca, bool ta, const std::vector<float>& b,
                             int64_t cb, bool tb, const std::vector<float>& c0, int64_t m, int64_t k, int64_t n,
                             float alpha, float beta) {
  std::vector<double> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double x = ta ? a[p * ca + i] : a[i * ca + p];
        const double y = tb ? b[j * cb + p] : b[p * cb + j];
        s += x * y;
      }
      const double old = beta == 0.0f ? 0.0 : double(beta) * c0[i * n + j];
      c[i * n + j] = double(alpha) * s + old;
    }
  }
  return c;
}

TEST(DenseIsa, MatmulAtEveryLevelMatchesTheReference) {
  auto rng = rng_for(0x6e77);
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  // (m, k, n): tiny, one row/column, odd sizes past Eigen's register blocks, and one
  // past its cache blocking (k > kc) so partial sums over k are added into c.
  const std::tuple<int64_t, int64_t, int64_t> shapes[] = {
      {1, 1, 1}, {3, 4, 5}, {1, 37, 1}, {67, 1, 13}, {129, 65, 33}, {203, 611, 47}, {64, 64, 64},
      // tall: the row-block paths (a tall output; a^T @ b summed over tall blocks), with a last partial block
      {20000, 64, 8}, {40, 20000, 8}};
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
    if (static_cast<int>(level) > static_cast<int>(best)) continue;
    SCOPED_TRACE(to_string(level));
    set_cpu_isa(level);
    for (auto [m, k, n] : shapes) {
      for (int form = 0; form < 4; ++form) {
        const bool ta = form & 1, tb = form & 2;
        const int64_t ra = ta ? k : m, ca = ta ? m : k, rb = tb ? n : k, cb = tb ? k : n;
        const auto a = random_values<float>(rng, ra * ca, -1, 1);
        const auto b = random_values<float>(rng, rb * cb, -1, 1);
        for (auto [alpha, beta] : {std::pair{1.0f, 0.0f}, {0.5f, 1.0f}, {-2.0f, 2.5f}}) {
          SCOPED_TRACE(testing::Message() << m << "x" << k << "x" << n << " ta " << ta << " tb " << tb
                                          << " alpha " << alpha << " beta " << beta);
          auto c0 = random_values<float>(rng, m * n, -1, 1);
          // beta == 0 must ignore c's old contents, NaN included.
          if (beta == 0.0f) c0.assign(c0.size(), std::numeric_limits<float>::quiet_NaN());
          Tensor at = Tensor::from_host(a, ra, ca), bt = Tensor::from_host(b, rb, cb);
          Tensor ct = Tensor::from_host(c0, m, n);
          gnn::ops::matmul(at, ta, bt, tb, ct, alpha, beta);
          const auto want = gemm_ref(a, ca, ta, b, cb, tb, c0, m, k, n, alpha, beta);
          const auto got = ct.to_host_vector();
          const double tol = 1e-6 * (double(k) * std::abs(alpha) + std::abs(beta) + 1) * 4;
          for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
        }
      }
    }
  }
  set_cpu_isa(original);
}

// Tall outputs of 16 MiB and more are written with streaming stores where the level
// has them (row_tile_gemm.hpp): widths 64 and 32, a last partial tile, alpha applied.
TEST(DenseIsa, LargeTallOutputsMatchTheReferenceAtEveryLevel) {
  auto rng = rng_for(0x57e4);
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  for (auto [m, n] : {std::pair<int64_t, int64_t>{65541, 64}, {131075, 32}}) {
    const int64_t k = 3;
    const auto a = random_values<float>(rng, m * k, -1, 1);
    const auto b = random_values<float>(rng, k * n, -1, 1);
    const std::vector<float> nan(static_cast<size_t>(m * n), std::numeric_limits<float>::quiet_NaN());
    const auto want = gemm_ref(a, k, false, b, n, false, nan, m, k, n, 0.5f, 0.0f);
    for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
      if (static_cast<int>(level) > static_cast<int>(best)) continue;
      SCOPED_TRACE(testing::Message() << to_string(level) << " " << m << "x" << k << "x" << n);
      set_cpu_isa(level);
      Tensor at = Tensor::from_host(a, m, k), bt = Tensor::from_host(b, k, n), ct = Tensor::from_host(nan, m, n);
      gnn::ops::matmul(at, false, bt, false, ct, 0.5f, 0.0f);
      const auto got = ct.to_host_vector();
      for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "element " << i;
    }
  }
  set_cpu_isa(original);
}

// The row-block GEMM paths split by fixed blocks, not by thread: the same bits at
// any thread count.
TEST(DenseIsa, TallMatmulsGiveTheSameBitsAtAnyThreadCount) {
  auto rng = rng_for(0x7a11);
  const int64_t tall = 3 * 4096 + 123, k = 48, n = 24;
  const auto x = random_values<float>(rng, tall * k, -1, 1);
  const auto g = random_values<float>(rng, tall * n, -1, 1);
  const auto w = random_values<float>(rng, k * n, -1, 1);
  Tensor xt = Tensor::from_host(x, tall, k), gt = Tensor::from_host(g, tall, n), wt = Tensor::from_host(w, k, n);
  const int threads = omp_get_max_threads();
  std::vector<std::vector<float>> results[2];
  for (int t : {1, 3}) {
    omp_set_num_threads(t);
    Tensor y(tall, n), dw(k, n), dx(tall, k);
    gnn::ops::matmul(xt, false, wt, false, y, 1.0f, 0.0f);   // forward
    gnn::ops::matmul(xt, true, gt, false, dw, 1.0f, 0.0f);   // weight gradient
    gnn::ops::matmul(gt, false, wt, true, dx, 1.0f, 0.0f);   // input gradient
    results[t == 1 ? 0 : 1] = {y.to_host_vector(), dw.to_host_vector(), dx.to_host_vector()};
  }
  omp_set_num_threads(threads);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(std::memcmp(results[0][i].data(), results[1][i].data(), results[0][i].size() * sizeof(float)), 0)
        << "product " << i;
  }
}

TEST(DenseIsa, DropoutIsTheSameBitForBitAtEveryLevel) {
  auto rng = rng_for(0xd0);
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  const uint64_t seed = 0x1234'5678'9abcull, stream = 7;
  // Sizes around the 64-element vector groups, and one past the parallel threshold.
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{63}, int64_t{64}, int64_t{65}, int64_t{4099},
                    int64_t{100003}}) {
    const auto x = random_values<float>(rng, n, -10, 10);
    for (float p : {0.0f, 0.5f, 0.9f}) {
      SCOPED_TRACE(testing::Message() << "n " << n << " p " << p);
      // The oracle: element i is kept when the top 24 bits of Philox word i % 4 of
      // block i / 4, as a float in [0, 1), are >= p; kept values are scaled by 1 / (1 - p).
      std::vector<float> want(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const PhiloxBlock block = philox_block(seed, stream, static_cast<uint64_t>(i / 4));
        const float u = static_cast<float>(block.v[i % 4] >> 8) / 16777216.0f;
        want[i] = u >= p ? x[i] * (1.0f / (1.0f - p)) : 0.0f;
      }
      for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
        if (static_cast<int>(level) > static_cast<int>(best)) continue;
        SCOPED_TRACE(to_string(level));
        set_cpu_isa(level);
        Tensor xt = Tensor::from_host(x, n, 1);
        Tensor yt = Tensor::full(n, 1, std::numeric_limits<float>::quiet_NaN());
        gnn::ops::dropout(xt, p, seed, stream, yt);
        const auto got = yt.to_host_vector();
        ASSERT_EQ(got.size(), want.size());
        if (!got.empty()) {
          ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
        }
      }
    }
  }
  set_cpu_isa(original);
}

}  // namespace
}  // namespace edgewise::test
