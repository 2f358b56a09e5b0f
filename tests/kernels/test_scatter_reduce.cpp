// scatter_reduce against the sequential oracle: every op x dtype x index type,
// index regimes (both CPU strategies), boundary sizes, arg/NaN/-0/empty semantics,
// reproducibility, bad input (outputs untouched), devices and the 2^32-row limit.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "scatter_reduce_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using ScatterReduceTest = DeviceTest;
constexpr auto& kOps = kAllReduceOps;

// Runs scatter_reduce on `device` with poisoned outputs; returns (out, arg) on the host.
template <class T, class I>
std::pair<std::vector<T>, std::vector<int64_t>> run_scatter(Device device, const std::vector<T>& values, int64_t C,
                                                            const std::vector<I>& index, int64_t S, ReduceOp op,
                                                            bool with_arg) {
  const int64_t M = static_cast<int64_t>(index.size());
  auto d_values = to_device(values, device);
  auto d_index = to_device(index, device);
  auto d_out = poisoned<T>(S * C, device);
  auto d_arg = poisoned<int64_t>(with_arg ? S * C : 0, device);
  MatrixView<int64_t> arg_view;
  if (with_arg) arg_view = MatrixView<int64_t>(d_arg.data(), S, C, device);
  Context ctx(device);
  scatter_reduce<T, I>(d_values.matrix(M, C), d_index.view(), op, d_out.matrix(S, C), arg_view, ctx);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

// Default tolerances per element type (float vs a double oracle; double vs long double).
template <class T>
constexpr double kRtol = sizeof(T) == 8 ? 1e-12 : 2e-6;
template <class T>
constexpr double kAtol = sizeof(T) == 8 ? 1e-12 : 1e-6;

template <class T, class I>
void expect_matches_reference(Device device, const std::vector<T>& values, int64_t C, const std::vector<I>& index,
                              int64_t S, ReduceOp op, const std::string& label, double rtol = kRtol<T>) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)) + " index=int" + std::to_string(8 * sizeof(I)));
  if (std::is_integral_v<T> && !defined_for_integers(op)) {  // var/std: floating point only
    expect_undefined_for_integers([&] { run_scatter(device, values, C, index, S, op, false); }, op, element_type_name<T>());
    return;
  }
  const bool extremum = has_arg(op);
  auto ref = reference::scatter_reduce_ref(values, C, index, S, op);
  auto [out, arg] = run_scatter(device, values, C, index, S, op, extremum);
  if (std::is_floating_point_v<T> && !extremum) {
    EXPECT_TRUE(close_to(out, ref.out, ref.scale, rtol, kAtol<T>));
  } else {
    EXPECT_TRUE(equal_exactly(out, ref.out));
  }
  if (extremum) {
    EXPECT_TRUE(equal_exactly(arg, ref.arg)) << "(arg)";
    auto [out_no_arg, none] = run_scatter(device, values, C, index, S, op, false);
    EXPECT_TRUE(equal_exactly(out_no_arg, ref.out)) << "(min/max without arg)";
  }
}

// Index regimes. With 2+ threads the CPU driver uses thread-private partials
// while threads x S x C states are a small share of the input and owner-computes
// otherwise; the shapes below land in both (S = 5 next to M = 640, and S > M).
enum class IndexRegime { Uniform, OneTarget, Permutation, Sorted, HalfEmpty, PowerLaw };

const char* index_regime_name(IndexRegime r) {
  switch (r) {
    case IndexRegime::Uniform: return "uniform";
    case IndexRegime::OneTarget: return "one-target";
    case IndexRegime::Permutation: return "permutation";
    case IndexRegime::Sorted: return "sorted";
    case IndexRegime::HalfEmpty: return "half-empty";
    case IndexRegime::PowerLaw: return "power-law";
  }
  return "?";
}

template <class I>
std::vector<I> make_index(std::mt19937_64& rng, IndexRegime regime, int64_t M, int64_t S) {
  std::vector<I> index(static_cast<size_t>(M));
  if (S == 0) return index;
  std::uniform_int_distribution<int64_t> any(0, S - 1);
  switch (regime) {
    case IndexRegime::Uniform:
      for (auto& i : index) i = static_cast<I>(any(rng));
      break;
    case IndexRegime::OneTarget: {
      const I hub = static_cast<I>(any(rng));
      std::fill(index.begin(), index.end(), hub);
      break;
    }
    case IndexRegime::Permutation:
      for (int64_t r = 0; r < M; ++r) index[r] = static_cast<I>(r % S);
      std::shuffle(index.begin(), index.end(), rng);
      break;
    case IndexRegime::Sorted:
      for (auto& i : index) i = static_cast<I>(any(rng));
      std::sort(index.begin(), index.end());
      break;
    case IndexRegime::HalfEmpty:  // only even outputs are reached
      for (auto& i : index) i = static_cast<I>(any(rng) / 2 * 2);
      break;
    case IndexRegime::PowerLaw: {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (auto& i : index) i = static_cast<I>(std::min<int64_t>(S - 1, static_cast<int64_t>(S * std::pow(u(rng), 4.0))));
      break;
    }
  }
  return index;
}

template <class T, class I>
void sweep_regimes(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const IndexRegime regimes[] = {IndexRegime::Uniform,   IndexRegime::OneTarget, IndexRegime::Permutation,
                                 IndexRegime::Sorted,    IndexRegime::HalfEmpty, IndexRegime::PowerLaw};
  for (IndexRegime regime : regimes) {
    for (int64_t C : {1, 3, 16, 67}) {
      for (auto [M, S] : {std::pair<int64_t, int64_t>{640, 5}, {300, 1000}}) {
        // Small integers keep integer sums exact and make ties frequent.
        auto values = random_values<T>(rng, M * C, std::is_unsigned_v<T> ? 0 : -20, 20);
        auto index = make_index<I>(rng, regime, M, S);
        for (ReduceOp op : kOps) {
          expect_matches_reference(device, values, C, index, S, op,
                                   detail::concat("regime=", index_regime_name(regime), " M=", M, " C=", C, " S=", S));
        }
      }
    }
  }
}

TEST_P(ScatterReduceTest, FloatMatchesReferenceInEveryRegime) {
  sweep_regimes<float, int64_t>(device(), 1);
  sweep_regimes<float, int32_t>(device(), 2);
}
TEST_P(ScatterReduceTest, Int32MatchesReferenceInEveryRegime) {
  sweep_regimes<int32_t, int64_t>(device(), 3);
  sweep_regimes<int32_t, int32_t>(device(), 4);
}
TEST_P(ScatterReduceTest, UInt32MatchesReferenceInEveryRegime) {
  sweep_regimes<uint32_t, int64_t>(device(), 5);
  sweep_regimes<uint32_t, int32_t>(device(), 6);
}
TEST_P(ScatterReduceTest, Float64MatchesReferenceInEveryRegime) {
  sweep_regimes<double, int64_t>(device(), 51);
  sweep_regimes<double, int32_t>(device(), 52);
}

// float64 accumulates in float64 and its min/max (64-bit keys: no packed word) keep
// the lowest winning row: non-integer values, both CPU strategies, 1-3 threads, and
// values float32 cannot tell apart.
TEST_P(ScatterReduceTest, Float64KeepsDoublePrecisionAndTheLowestWinningRow) {
  auto rng = rng_for(53);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (auto [M, S] : {std::pair<int64_t, int64_t>{3000, 7}, {3000, 2500}}) {
      for (int64_t C : {1, 2, 16, 67}) {
        auto values = random_values<double>(rng, M * C, -1, 1);
        for (int64_t k = 0; k < M * C; k += 5) values[k] = 0.25;  // many ties, some max/min candidates
        auto index = make_index<int64_t>(rng, IndexRegime::PowerLaw, M, S);
        for (ReduceOp op : kOps) {
          expect_matches_reference(device(), values, C, index, S, op,
                                   detail::concat("threads=", threads, " M=", M, " S=", S, " C=", C));
        }
      }
    }
  }
  omp_set_num_threads(saved);
  const double fine = 1.0 + 0x1p-40, finer = 1.0 + 0x1p-41;  // both 1.0f in float32
  const std::vector<double> values = {finer, fine, fine, 1.0, finer};
  const std::vector<int32_t> index = {0, 0, 0, 1, 1};
  auto [mx, amx] = run_scatter(device(), values, 1, index, 2, ReduceOp::Max, true);
  EXPECT_EQ(mx, (std::vector<double>{fine, finer}));
  EXPECT_EQ(amx, (std::vector<int64_t>{1, 4})) << "the larger double, ties -> the lower row";
  auto [mn, amn] = run_scatter(device(), values, 1, index, 2, ReduceOp::Min, true);
  EXPECT_EQ(mn, (std::vector<double>{finer, 1.0}));
  EXPECT_EQ(amn, (std::vector<int64_t>{0, 3}));
  auto [sum, none] = run_scatter(device(), values, 1, index, 2, ReduceOp::Sum, false);
  EXPECT_EQ(sum[1], 1.0 + finer);
}

// The double NaN / signed-zero rules match float's: NaN wins (the first one, bit for
// bit), -0 == +0 with the lower row's bits written.
TEST_P(ScatterReduceTest, Float64NaNAndSignedZerosComeOutBitForBit) {
  uint64_t payload_bits = 0xFFF8000000001234ull;  // a negative quiet NaN with a payload
  double payload_nan;
  std::memcpy(&payload_nan, &payload_bits, sizeof payload_nan);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {-0.0, 0.0, 0.0, -0.0, 3.0, payload_nan, std::nan(""), -inf, -inf};
  const std::vector<int64_t> index = {0, 0, 1, 1, 2, 2, 2, 3, 3};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    for (bool with_arg : {true, false}) {
      auto [out, arg] = run_scatter(device(), values, 1, index, 5, op, with_arg);
      if (with_arg) {
        EXPECT_EQ(arg, (std::vector<int64_t>{0, 2, 5, 7, -1}));
      }
      EXPECT_TRUE(std::signbit(out[0])) << "row 0 holds -0";
      EXPECT_FALSE(std::signbit(out[1])) << "row 2 holds +0";
      uint64_t got_bits;
      std::memcpy(&got_bits, &out[2], sizeof got_bits);
      EXPECT_EQ(got_bits, payload_bits) << "the first NaN (row 5), bit for bit";
      EXPECT_EQ(out[3], -inf);
      EXPECT_EQ(out[4], 0.0) << "an output no row reaches";
    }
  }
}

// Every specialised width and the generic one, M and S around warp/vector boundaries.
TEST_P(ScatterReduceTest, BoundarySizes) {
  auto rng = rng_for(7);
  for (int64_t M : {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257}) {
    for (int64_t S : {1, 65}) {
      for (int64_t C : {1, 2, 4, 5, 8, 32, 64, 128, 129}) {
        auto values = random_values<float>(rng, M * C);
        auto index = make_index<int64_t>(rng, IndexRegime::Uniform, M, S);
        for (ReduceOp op : kOps) {
          expect_matches_reference(device(), values, C, index, S, op, detail::concat("M=", M, " S=", S, " C=", C));
        }
      }
    }
  }
}

// The same results at 1, 2 and 3 threads for both CPU strategies (the 3-thread
// team does not divide the rows or outputs evenly).
TEST_P(ScatterReduceTest, EveryThreadCountMatchesTheReference) {
  auto rng = rng_for(8);
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    for (auto [M, S] : {std::pair<int64_t, int64_t>{5000, 7}, {5000, 4000}}) {
      auto values = random_values<int32_t>(rng, M * 4, -50, 50);
      auto index = make_index<int32_t>(rng, IndexRegime::Uniform, M, S);
      for (ReduceOp op : kOps) {
        expect_matches_reference(device(), values, 4, index, S, op, detail::concat("threads=", threads, " S=", S));
      }
    }
  }
  omp_set_num_threads(saved);
}

// More rows than a partial holds outputs, in wide float rows: the merge of
// thread partials and the compaction chunks (4096 rows) of owner-computes.
TEST_P(ScatterReduceTest, LargeInputsMatchTheReference) {
  auto rng = rng_for(9);
  for (auto [M, S] : {std::pair<int64_t, int64_t>{200000, 100}, {30000, 20000}}) {
    for (int64_t C : {1, 16}) {
      auto values = random_values<float>(rng, M * C, -1, 1);
      auto index = make_index<int64_t>(rng, IndexRegime::PowerLaw, M, S);
      for (ReduceOp op : kOps) {
        expect_matches_reference(device(), values, C, index, S, op, detail::concat("M=", M, " S=", S, " C=", C),
                                 1e-5);
      }
    }
  }
}

// A state of S x C elements beyond 32 MiB: the CPU driver's grouped strategy (a
// counting sort of the rows by output, each output folded whole) for min / max (8
// bytes per element) and, in double, every op. Hubs longer than a chunk of outputs,
// empty outputs, frequent ties; 1 thread (partials) and 2 and 3 (grouped).
TEST_P(ScatterReduceTest, StatesBeyondTheLastLevelCacheMatchTheReference) {
  constexpr int64_t M = 120000, C = 64, S = 70000;
  auto rng = rng_for(0x6c0f);
  const int saved = omp_get_max_threads();
  for (IndexRegime regime : {IndexRegime::PowerLaw, IndexRegime::HalfEmpty}) {
    const auto index = make_index<int64_t>(rng, regime, M, S);
    const auto small = random_values<int32_t>(rng, M * C, -4, 4);  // ties in most outputs
    const std::vector<float> floats(small.begin(), small.end());
    const std::vector<double> doubles(small.begin(), small.end());
    for (int threads : {2, 3, 1}) {
      omp_set_num_threads(threads);
      const std::string label = detail::concat("regime=", index_regime_name(regime), " threads=", threads);
      for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
        expect_matches_reference(device(), floats, C, index, S, op, label + " float");
      }
      for (ReduceOp op : kOps) expect_matches_reference(device(), doubles, C, index, S, op, label + " double");
    }
  }
  // No rows at all: every output still gets the empty value (arg -1).
  for (ReduceOp op : kOps) {
    expect_matches_reference(device(), std::vector<double>{}, C, std::vector<int64_t>{}, S, op, "no rows");
  }
  omp_set_num_threads(saved);
}

TEST_P(ScatterReduceTest, TiesGoToTheLowerRowAndUnreachedOutputsWriteZeroAndMinusOne) {
  // Output 0: rows 1, 3, 4 all 7 -> arg 1. Output 1: no row. Output 2: rows 0, 2, 5
  // with the maximum 9 twice (rows 2 and 5) and the minimum 1 at row 0.
  const std::vector<float> values = {1, 7, 9, 7, 7, 9};
  const std::vector<int64_t> index = {2, 0, 2, 0, 0, 2};
  auto [mx, amx] = run_scatter(device(), values, 1, index, 3, ReduceOp::Max, true);
  EXPECT_EQ(mx, (std::vector<float>{7, 0, 9}));
  EXPECT_EQ(amx, (std::vector<int64_t>{1, -1, 2}));
  auto [mn, amn] = run_scatter(device(), values, 1, index, 3, ReduceOp::Min, true);
  EXPECT_EQ(mn, (std::vector<float>{7, 0, 1}));
  EXPECT_EQ(amn, (std::vector<int64_t>{1, -1, 0}));
  auto [mean, none] = run_scatter(device(), values, 1, index, 3, ReduceOp::Mean, false);
  EXPECT_EQ(mean, (std::vector<float>{7, 0, 19.0f / 3.0f}));
  auto [sum, none2] = run_scatter(device(), values, 1, index, 3, ReduceOp::Sum, false);
  EXPECT_EQ(sum, (std::vector<float>{21, 0, 19}));
}

// Every output gets the op's empty value (the oracle's: 0 for sum/mean/min/max).
TEST_P(ScatterReduceTest, NoRowsWritesTheEmptyValueEverywhere) {
  for (ReduceOp op : kOps) {
    auto [out, arg] = run_scatter(device(), std::vector<float>{}, 3, std::vector<int32_t>{}, 4, op, has_arg(op));
    const auto empty = reference::scatter_reduce_ref(std::vector<float>{}, 3, std::vector<int32_t>{}, 4, op).out;
    EXPECT_EQ(out, empty) << to_string(op);
    if (has_arg(op)) {
      EXPECT_EQ(arg, std::vector<int64_t>(12, -1));
    }
  }
}

TEST_P(ScatterReduceTest, NaNWinsMinAndMaxAndTheFirstNaNIsTheArg) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Output 0: 1, NaN (row 2), 5, NaN (row 5). Output 1: -inf twice. Output 2: inf, 2.
  const std::vector<float> values = {1, -inf, nan, -inf, 5, nan, inf, 2};
  const std::vector<int32_t> index = {0, 1, 0, 1, 0, 0, 2, 2};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    auto [out, arg] = run_scatter(device(), values, 1, index, 3, op, true);
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(arg[0], 2) << "the first NaN wins";
    EXPECT_EQ(out[1], -inf);
    EXPECT_EQ(arg[1], 1) << "all -inf: the lower row";
    EXPECT_EQ(out[2], op == ReduceOp::Max ? inf : 2.0f);
    EXPECT_EQ(arg[2], op == ReduceOp::Max ? 6 : 7);
    expect_matches_reference(device(), values, 1, index, 3, op, "nan");
  }
}

// -0 and +0 are equal, so the lower row wins and its bits are written; a NaN
// winner keeps its sign and payload.
TEST_P(ScatterReduceTest, SignedZerosAndNaNPayloadsComeOutBitForBit) {
  uint32_t payload_bits = 0xFFC01234u;  // a negative quiet NaN with a payload
  float payload_nan;
  std::memcpy(&payload_nan, &payload_bits, sizeof payload_nan);
  const std::vector<float> values = {-0.0f, 0.0f, 0.0f, -0.0f, 3.0f, payload_nan, std::nanf("")};
  const std::vector<int64_t> index = {0, 0, 1, 1, 2, 2, 2};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    for (bool with_arg : {true, false}) {
      auto [out, arg] = run_scatter(device(), values, 1, index, 3, op, with_arg);
      if (with_arg) {
        EXPECT_EQ(arg, (std::vector<int64_t>{0, 2, 5}));
      }
      EXPECT_TRUE(std::signbit(out[0])) << "row 0 holds -0";
      EXPECT_FALSE(std::signbit(out[1])) << "row 2 holds +0";
      uint32_t got_bits;
      std::memcpy(&got_bits, &out[2], sizeof got_bits);
      EXPECT_EQ(got_bits, payload_bits) << "the first NaN (row 5), bit for bit";
    }
  }
}

// Enough outputs that a thread's min/max state passes any core's L2 (S x C x 8 bytes =
// 10 MB), where the AVX-512 copy folds packed (key, row) words: ties, signed zeros
// and NaNs with distinct payloads must come out as the oracle's, bit for bit, with
// the same args.
TEST_P(ScatterReduceTest, LargeStateMinMaxKeepNaNTieAndSignedZeroRules) {
  constexpr int64_t M = 400000, C = 8, S = 160000;
  auto rng = rng_for(0x9a7c);
  std::uniform_int_distribution<int> small(-3, 3), per_mille(0, 999);
  std::vector<float> values(static_cast<size_t>(M * C));
  for (size_t i = 0; i < values.size(); ++i) {
    const int kind = per_mille(rng);
    if (kind < 2) {  // NaNs of either sign with a payload that tells them apart
      const uint32_t bits = (kind ? 0xFFC00000u : 0x7FC00000u) | static_cast<uint32_t>(i & 0x3FFFFF);
      std::memcpy(&values[i], &bits, sizeof bits);
    } else {
      values[i] = kind < 100 ? -0.0f : static_cast<float>(small(rng));  // ties everywhere
    }
  }
  std::uniform_int_distribution<int64_t> target(0, S - 1);
  std::vector<int64_t> index64(static_cast<size_t>(M));
  for (auto& t : index64) t = target(rng);
  const std::vector<int32_t> index32(index64.begin(), index64.end());
  const auto bits_of = [](const std::vector<float>& v) {
    std::vector<uint32_t> bits(v.size());
    std::memcpy(bits.data(), v.data(), v.size() * sizeof(float));
    return bits;
  };
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    SCOPED_TRACE(to_string(op));
    const auto ref = reference::scatter_reduce_ref(values, C, index64, S, op);
    for (bool wide_index : {true, false}) {
      auto [out, arg] = wide_index ? run_scatter(device(), values, C, index64, S, op, true)
                                   : run_scatter(device(), values, C, index32, S, op, true);
      SCOPED_TRACE(wide_index ? "int64 index" : "int32 index");
      const auto got_bits = bits_of(out), want_bits = bits_of(ref.out);
      ASSERT_EQ(got_bits.size(), want_bits.size());
      ASSERT_EQ(arg.size(), ref.arg.size());
      for (size_t i = 0; i < got_bits.size(); ++i) {
        ASSERT_EQ(got_bits[i], want_bits[i]) << "out bits at " << i;
        ASSERT_EQ(arg[i], ref.arg[i]) << "arg at " << i;
      }
    }
  }
}

TEST_P(ScatterReduceTest, IntegerExtremesWrappingSumsAndFlooringMeans) {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  const std::vector<int32_t> values = {hi, lo, hi, lo, -7, 4};
  const std::vector<int64_t> index = {0, 1, 0, 1, 2, 2};
  for (ReduceOp op : kOps) expect_matches_reference(device(), values, 1, index, 3, op, "int32 extremes");
  auto [sum, none] = run_scatter(device(), values, 1, index, 3, ReduceOp::Sum, false);
  EXPECT_EQ(sum[0], -2) << "int32 sums wrap modulo 2^32";
  EXPECT_EQ(sum[1], 0);
  auto [mean, none2] = run_scatter(device(), values, 1, index, 3, ReduceOp::Mean, false);
  EXPECT_EQ(mean[0], hi) << "means accumulate in 64 bits";
  EXPECT_EQ(mean[1], lo);
  EXPECT_EQ(mean[2], -2) << "-3 / 2 rounds toward -inf (torch_scatter's scatter_mean floors)";
  const uint32_t umax = std::numeric_limits<uint32_t>::max();
  const std::vector<uint32_t> uvalues = {umax, 0, umax, 1, 0, umax};
  for (ReduceOp op : kOps) {
    expect_matches_reference(device(), uvalues, 2, std::vector<int32_t>{1, 1, 0}, 2, op, "uint32 extremes");
  }
}

// mul through the scatter path (CPU partials, CUDA atomicCAS loop): empty outputs
// get 1, zeros give 0, int32 wraps, and float products near 1 match the oracle.
TEST_P(ScatterReduceTest, MulFollowsTorchScatterSemantics) {
  auto [out, none] = run_scatter(device(), std::vector<float>{2, 0, 3, 5}, 1, std::vector<int32_t>{0, 2, 0, 2}, 3,
                                 ReduceOp::Mul, false);
  EXPECT_EQ(out, (std::vector<float>{6, 1, 0}));
  auto [wrapped, none2] = run_scatter(device(), std::vector<int32_t>{65536, -3, 65536}, 1,
                                      std::vector<int32_t>{0, 1, 0}, 2, ReduceOp::Mul, false);
  EXPECT_EQ(wrapped, (std::vector<int32_t>{0, -3}));
  auto rng = rng_for(41);
  const int64_t M = 20000, S = 300;
  for (int64_t C : {1, 16}) {
    auto index = make_index<int64_t>(rng, IndexRegime::PowerLaw, M, S);
    auto values = random_values<float>(rng, M * C, 0.999, 1.001);
    expect_matches_reference(device(), values, C, index, S, ReduceOp::Mul, detail::concat("C=", C));
  }
}

// Min/max (value and arg) and integer sums never depend on the order of work;
// float sums are identical across runs (CPU: with the same thread count).
TEST_P(ScatterReduceTest, ResultsAreReproducible) {
  auto rng = rng_for(10);
  const int64_t M = 60000, S = 300, C = 16;
  auto values = random_values<float>(rng, M * C, -1, 1);
  auto index = make_index<int64_t>(rng, IndexRegime::PowerLaw, M, S);
  for (ReduceOp op : kOps) {
    auto [out0, arg0] = run_scatter(device(), values, C, index, S, op, has_arg(op));
    auto [out1, arg1] = run_scatter(device(), values, C, index, S, op, has_arg(op));
    if (!has_arg(op)) {
      if (device().is_cpu()) {
        EXPECT_EQ(std::memcmp(out0.data(), out1.data(), out0.size() * sizeof(float)), 0) << to_string(op);
      }
      continue;  // CUDA float sums: atomics, order varies (documented)
    }
    EXPECT_EQ(std::memcmp(out0.data(), out1.data(), out0.size() * sizeof(float)), 0) << to_string(op);
    EXPECT_EQ(arg0, arg1);
  }
  if (device().is_cpu()) {  // min/max across thread counts, both CPU strategies
    const int saved = omp_get_max_threads();
    for (int64_t s : {S, M}) {
      auto idx = make_index<int64_t>(rng, IndexRegime::Uniform, M, s);
      omp_set_num_threads(1);
      auto one = run_scatter(device(), values, C, idx, s, ReduceOp::Max, true);
      omp_set_num_threads(2);
      auto two = run_scatter(device(), values, C, idx, s, ReduceOp::Max, true);
      omp_set_num_threads(saved);
      EXPECT_EQ(std::memcmp(one.first.data(), two.first.data(), one.first.size() * sizeof(float)), 0);
      EXPECT_EQ(one.second, two.second);
    }
  }
}

// Bad input: a clear error naming the op, the argument and the values; out/arg untouched.
TEST_P(ScatterReduceTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);  // [3, 2]
  struct Case {
    std::vector<int64_t> index;
    int64_t out_rows;
    int64_t out_cols;
    ReduceOp op;
    bool with_arg;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{0, 1, 4}, 4, 2, ReduceOp::Sum, false, "index[2] (4) must lie in [0, 4)"},
      {{0, -1, 1}, 4, 2, ReduceOp::Max, true, "index[1] (-1) must lie in [0, 4)"},
      {{9, 9, 9}, 4, 2, ReduceOp::Mean, false, "index[0] (9) must lie in [0, 4)"},
      {{0, 0, 0}, 0, 2, ReduceOp::Sum, false, "index[0] (0) must lie in [0, 0)"},
      {{0, 1}, 4, 2, ReduceOp::Sum, false, "index.size() (2) must equal values.rows() (3)"},
      {{0, 1, 2}, 4, 3, ReduceOp::Sum, false, "out.cols() (3) must equal values.cols() (2)"},
      {{0, 1, 2}, 4, 2, ReduceOp::Mean, true, "arg is only defined for min and max"},
  };
  for (const Case& c : cases) {
    auto index = to_device(c.index, dev);
    auto out = poisoned<float>(std::max<int64_t>(c.out_rows * c.out_cols, 1), dev);
    auto arg = poisoned<int64_t>(std::max<int64_t>(c.out_rows * c.out_cols, 1), dev);
    const auto out_before = out.to_host_vector();
    MatrixView<int64_t> arg_view;
    if (c.with_arg) arg_view = MatrixView<int64_t>(arg.data(), c.out_rows, c.out_cols, dev);
    Context ctx(dev);
    try {
      scatter_reduce<float, int64_t>(values.matrix(3, 2), index.view(), c.op,
                                     MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), arg_view, ctx);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scatter_reduce"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), out_before.data(), out_before.size() * sizeof(float)), 0)
        << "out changed for case '" << c.needle << "'";
    for (int64_t a : arg.to_host_vector()) EXPECT_EQ(a, -1) << "arg changed for case '" << c.needle << "'";
  }
}

// An int32 index is checked as its own values (no sign-extension surprises).
TEST_P(ScatterReduceTest, Int32IndexOutOfRangeIsReported) {
  auto values = to_device(std::vector<uint32_t>{1, 2, 3}, device());
  auto index = to_device(std::vector<int32_t>{0, std::numeric_limits<int32_t>::min(), 1}, device());
  auto out = poisoned<uint32_t>(2, device());
  Context ctx(device());
  try {
    scatter_reduce<uint32_t, int32_t>(values.matrix(3, 1), index.view(), ReduceOp::Min, out.matrix(2, 1), {}, ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("scatter_reduce: index[1] (-2147483648) must lie in [0, 2)"),
              std::string::npos)
        << e.what();
  }
  for (uint32_t o : out.to_host_vector()) EXPECT_EQ(o, 0xFFFFFFFFu);
}

INSTANTIATE_TEST_SUITE_P(Devices, ScatterReduceTest, testing::ValuesIn(all_devices()), device_name);

// Views on one device with a context on another are rejected before any work.
TEST(ScatterReduceDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<float> values = {1, 2};
  std::vector<int64_t> index = {0, 0};
  std::vector<float> out(1);
  Context cuda_ctx(Device::cuda(0));
  try {
    scatter_reduce<float, int64_t>(MatrixView<const float>(values.data(), 2, 1),
                                   VectorView<const int64_t>(index.data(), 2), ReduceOp::Sum,
                                   MatrixView<float>(out.data(), 1, 1), {}, cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("values is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
}

// Asking for CUDA where it cannot run (a CPU-only build, or a CUDA build on a
// machine without a usable GPU) is a clear error, never a crash.
TEST(ScatterReduceDevices, CudaWithoutAUsableGpuSaysSo) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present: the CUDA cases exercise it";
  const std::string expected = "scatter_reduce: no CUDA device is available (" + cuda_unavailable_reason() + ")";
  try {
    Context ctx(Device::cuda(0));
    MatrixView<const float> values(nullptr, 0, 1, Device::cuda(0));
    VectorView<const int32_t> index(nullptr, 0, Device::cuda(0));
    std::vector<float> host(1);
    MatrixView<float> out(host.data(), 1, 1, Device::cuda(0));
    scatter_reduce<float, int32_t>(values, index, ReduceOp::Sum, out, {}, ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

// The packed min/max word stores rows in 32 bits: M > 2^32 - 1 is rejected up
// front (shape check, before any element is read; the pointers are never touched).
TEST(ScatterReduceLimits, MinMaxRejectMoreThan32BitRows) {
  const int64_t M = int64_t{1} << 32;
  float fake_value = 0;
  int64_t fake_index = 0;
  MatrixView<const float> values(&fake_value, M, 1);
  VectorView<const int64_t> index(&fake_index, M);
  std::vector<float> out(1, -3.0f);
  Context ctx;
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    try {
      scatter_reduce<float, int64_t>(values, index, op, MatrixView<float>(out.data(), 1, 1), {}, ctx);
      ADD_FAILURE() << "no error";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("stores the winning row in 32 bits, so values.rows() (4294967296) must be "
                                           "at most 4294967295"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(out[0], -3.0f);
}

TEST(ScatterReduceDevices, ValidationCanBeSwitchedOffForTrustedInput) {
  std::vector<float> values = {1, 2, 3};
  std::vector<int32_t> index = {1, 0, 1};
  std::vector<float> out(2, -1);
  Context ctx;
  ctx.validate = false;
  scatter_reduce<float, int32_t>(MatrixView<const float>(values.data(), 3, 1),
                                 VectorView<const int32_t>(index.data(), 3), ReduceOp::Sum,
                                 MatrixView<float>(out.data(), 2, 1), {}, ctx);
  EXPECT_EQ(out, (std::vector<float>{2, 4}));
  std::vector<float> out2(2, -1);  // the default-context overload gives the same answer
  scatter_reduce<float, int32_t>(MatrixView<const float>(values.data(), 3, 1),
                                 VectorView<const int32_t>(index.data(), 3), ReduceOp::Sum,
                                 MatrixView<float>(out2.data(), 2, 1));
  EXPECT_EQ(out2, out);
}

}  // namespace
}  // namespace edgewise::test
