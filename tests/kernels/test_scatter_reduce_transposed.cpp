// scatter_reduce_transposed: values [C, M] and outputs [C, S], checked against the
// reference on the row-major transpose (every op, element type, thread count, tiles
// of rows, NaN and signed-zero bits) and for its argument errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cstring>
#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/cpu_isa_dispatch.hpp"
#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "scatter_reduce_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using ScatterReduceTransposedTest = DeviceTest;

template <class T>
std::vector<T> transpose(const std::vector<T>& a, int64_t rows, int64_t cols) {
  std::vector<T> t(a.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = a[r * cols + c];
  }
  return t;
}

// (out_t, arg_t) on the host, outputs poisoned first.
template <class T, class I>
std::pair<std::vector<T>, std::vector<int64_t>> run_transposed(Device device, const std::vector<T>& values_t,
                                                               int64_t C, const std::vector<I>& index, int64_t S,
                                                               ReduceOp op, bool with_arg) {
  const int64_t M = static_cast<int64_t>(index.size());
  auto d_values = to_device(values_t, device);
  auto d_index = to_device(index, device);
  auto d_out = poisoned<T>(C * S, device);
  auto d_arg = poisoned<int64_t>(with_arg ? C * S : 0, device);
  MatrixView<int64_t> arg_view;
  if (with_arg) arg_view = MatrixView<int64_t>(d_arg.data(), C, S, device);
  Context ctx(device);
  scatter_reduce_transposed<T, I>(d_values.matrix(C, M), d_index.view(), op, d_out.matrix(C, S), arg_view, ctx);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

// values [M, C] row-major; the kernel gets them transposed and its outputs are
// transposed back before the comparison with the oracle.
template <class T, class I>
void expect_matches_reference(Device device, const std::vector<T>& values, int64_t C, const std::vector<I>& index,
                              int64_t S, ReduceOp op, const std::string& label) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)));
  if (std::is_integral_v<T> && !defined_for_integers(op)) return;
  const int64_t M = static_cast<int64_t>(index.size());
  const bool extremum = has_arg(op);
  const auto ref = reference::scatter_reduce_ref(values, C, index, S, op);
  auto [out_t, arg_t] = run_transposed(device, transpose(values, M, C), C, index, S, op, extremum);
  const auto out = transpose(out_t, C, S);
  if constexpr (std::is_floating_point_v<T>) {
    if (!extremum) {
      EXPECT_TRUE(close_to(out, ref.out, ref.scale, sizeof(T) == 8 ? 1e-12 : 1e-5, sizeof(T) == 8 ? 1e-12 : 1e-5));
      return;
    }
  }
  EXPECT_TRUE(equal_exactly(out, ref.out));
  if (extremum) {
    EXPECT_TRUE(equal_exactly(transpose(arg_t, C, S), ref.arg)) << "(arg)";
  }
}

template <class T>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  for (int64_t C : {1, 2, 3, 16, 67}) {
    // 5000 rows cross the CPU's tiles of rows (1024 or more) with a partial last tile.
    for (auto [M, S] : {std::pair<int64_t, int64_t>{640, 5}, {300, 1000}, {5000, 37}}) {
      auto values = random_values<T>(rng, M * C, std::is_unsigned_v<T> ? 0 : -20, 20);
      std::vector<int64_t> index(static_cast<size_t>(M));
      std::uniform_int_distribution<int64_t> any(0, S - 1);
      for (auto& i : index) i = any(rng) / 2 * 2;  // odd outputs stay empty
      for (ReduceOp op : kAllReduceOps) {
        if (op == ReduceOp::Mul) continue;  // products of 100+ rows overflow; Mul is covered below
        expect_matches_reference(device, values, C, index, S, op, detail::concat("M=", M, " C=", C, " S=", S));
      }
    }
  }
}

TEST_P(ScatterReduceTransposedTest, FloatMatchesTheReference) { sweep<float>(device(), 1); }
TEST_P(ScatterReduceTransposedTest, DoubleMatchesTheReference) { sweep<double>(device(), 2); }
TEST_P(ScatterReduceTransposedTest, Int32MatchesTheReference) { sweep<int32_t>(device(), 3); }
TEST_P(ScatterReduceTransposedTest, Int64MatchesTheReference) { sweep<int64_t>(device(), 4); }

// 16-bit floats: the oracle runs in float on the same (exactly representable) values;
// its result rounded once to H is what the kernel's float accumulation must give
// (exactly for min/max and arg, within ~2 ulp of H otherwise).
template <class H>
void sweep_half(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int> quarter(-60, 60);
  std::uniform_int_distribution<int64_t> any(0, 36);
  const int64_t M = 3000, S = 37;
  for (int64_t C : {1, 3, 16, 67}) {
    std::vector<float> values_f(static_cast<size_t>(M * C));
    for (auto& v : values_f) v = static_cast<float>(quarter(rng)) / 4.0f;
    const std::vector<H> values_t(values_f.begin(), values_f.end());  // row-major here, transposed below
    std::vector<int64_t> index(static_cast<size_t>(M));
    for (auto& i : index) i = any(rng);
    for (ReduceOp op : kAllReduceOps) {
      if (op == ReduceOp::Mul) continue;
      SCOPED_TRACE(detail::concat("C=", C, " op=", to_string(op), " type=", element_type_name<H>()));
      const auto ref = reference::scatter_reduce_ref(values_f, C, index, S, op);
      auto [out_t, arg_t] = run_transposed(device, transpose(values_t, M, C), C, index, S, op, has_arg(op));
      const auto out = transpose(out_t, C, S);
      std::vector<float> got(out.begin(), out.end()), want;
      for (float f : ref.out) want.push_back(static_cast<float>(H(f)));
      if (has_arg(op)) {
        EXPECT_TRUE(equal_exactly(got, want));
        EXPECT_TRUE(equal_exactly(transpose(arg_t, C, S), ref.arg)) << "(arg)";
      } else {
        EXPECT_TRUE(close_to(got, want, ref.scale, std::is_same_v<H, Half> ? 2e-3 : 1.6e-2, 1e-3));
      }
    }
  }
}

TEST_P(ScatterReduceTransposedTest, Float16MatchesTheReference) { sweep_half<Half>(device(), 5); }
TEST_P(ScatterReduceTransposedTest, BFloat16MatchesTheReference) { sweep_half<BFloat16>(device(), 7); }

// The CPU builds its tiles of rows in 8 x 8 register blocks (4-byte elements at the
// AVX2 and AVX-512 levels, 2-byte ones at every x86 level) and element by element at
// the edges: each level must match the reference at thread counts that leave a thread
// full blocks, edges, or both (C = 16 over 1, 2, 3 threads: 16, 8, 5 or 6 columns).
TEST(ScatterReduceTransposedCpu, EveryIsaLevelAndThreadCountMatchesTheReference) {
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  const int saved = omp_get_max_threads();
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
    if (static_cast<int>(level) > static_cast<int>(best)) continue;
    SCOPED_TRACE(to_string(level));
    set_cpu_isa(level);
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(detail::concat("threads=", threads));
      omp_set_num_threads(threads);
      sweep<float>(Device::cpu(), 20 + threads);
      sweep_half<BFloat16>(Device::cpu(), 30 + threads);
    }
  }
  omp_set_num_threads(saved);
  set_cpu_isa(original);
}

TEST_P(ScatterReduceTransposedTest, MulAndEveryThreadCountMatchTheReference) {
  auto rng = rng_for(6);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    const int64_t M = 3000, S = 900, C = 5;
    auto values = random_values<int32_t>(rng, M * C, -3, 3);
    std::vector<int32_t> index(M);
    std::uniform_int_distribution<int32_t> any(0, S - 1);
    for (auto& i : index) i = any(rng);
    for (ReduceOp op : kAllReduceOps) {
      expect_matches_reference(device(), values, C, index, S, op, detail::concat("threads=", threads));
    }
  }
  omp_set_num_threads(saved);
}

// Min/max write the winner's bits, read back from the transposed values for zeros
// and NaNs (a column stride of M, not 1).
TEST_P(ScatterReduceTransposedTest, SignedZerosAndNaNPayloadsComeOutBitForBit) {
  const float nan_a = std::bit_cast<float>(0x7fc00123u), nan_b = std::bit_cast<float>(0xffc00456u);
  // [M = 4, C = 3] row-major; all rows go to output 0.
  const std::vector<float> values = {-0.0f, 1.0f, nan_a, 0.0f, nan_b, 2.0f, -0.0f, 3.0f, nan_b, 0.0f, 0.5f, 1.0f};
  const std::vector<int64_t> index = {0, 0, 0, 0};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    const auto ref = reference::scatter_reduce_ref(values, 3, index, 1, op);
    auto [out_t, arg_t] = run_transposed(device(), transpose(values, 4, 3), 3, index, 1, op, true);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(std::bit_cast<uint32_t>(out_t[c]), std::bit_cast<uint32_t>(ref.out[c])) << to_string(op) << " c=" << c;
      EXPECT_EQ(arg_t[c], ref.arg[c]) << to_string(op) << " c=" << c;
    }
  }
}

TEST_P(ScatterReduceTransposedTest, NoRowsWritesTheEmptyValue) {
  auto [out, arg] = run_transposed(device(), std::vector<float>{}, 3, std::vector<int64_t>{}, 4, ReduceOp::Max, true);
  EXPECT_EQ(out, std::vector<float>(12, 0.0f));
  EXPECT_EQ(arg, std::vector<int64_t>(12, -1));
}

TEST_P(ScatterReduceTransposedTest, BadInputThrowsNamingTheArgumentAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);  // values_t [2, 3]
  struct Case {
    std::vector<int64_t> index;
    int64_t out_rows, out_cols;
    ReduceOp op;
    bool with_arg;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{0, 1, 4}, 2, 4, ReduceOp::Sum, false, "index[2] (4) must lie in [0, 4)"},
      {{0, -1, 1}, 2, 4, ReduceOp::Max, true, "index[1] (-1) must lie in [0, 4)"},
      {{0, 1}, 2, 4, ReduceOp::Sum, false, "index.size() (2) must equal values_t.cols() (3)"},
      {{0, 1, 2}, 3, 4, ReduceOp::Sum, false, "out_t.rows() (3) must equal values_t.rows() (2)"},
      {{0, 1, 2}, 2, 4, ReduceOp::Mean, true, "arg_t is only defined for min and max"},
  };
  for (const Case& c : cases) {
    auto index = to_device(c.index, dev);
    auto out = poisoned<float>(c.out_rows * c.out_cols, dev);
    auto arg = poisoned<int64_t>(c.out_rows * c.out_cols, dev);
    const auto out_before = out.to_host_vector();
    MatrixView<int64_t> arg_view;
    if (c.with_arg) arg_view = MatrixView<int64_t>(arg.data(), c.out_rows, c.out_cols, dev);
    Context ctx(dev);
    try {
      scatter_reduce_transposed<float, int64_t>(values.matrix(2, 3), index.view(), c.op,
                                                MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), arg_view,
                                                ctx);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scatter_reduce_transposed"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), out_before.data(), out_before.size() * sizeof(float)), 0)
        << "out changed for case '" << c.needle << "'";
    for (int64_t a : arg.to_host_vector()) EXPECT_EQ(a, -1) << "arg changed for case '" << c.needle << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterReduceTransposedTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
