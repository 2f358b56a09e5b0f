// segment_reduce against the sequential oracle: every op x dtype, segment regimes,
// boundary sizes, huge segments, arg/NaN/empty semantics, determinism, bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "segment_reduce_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using SegmentReduceTest = DeviceTest;
constexpr auto& kOps = kAllReduceOps;

// Runs segment_reduce on `device` with poisoned outputs; returns (out, arg) on the host.
template <class T>
std::pair<std::vector<T>, std::vector<int64_t>> run_segment_reduce(Device device, const std::vector<T>& values,
                                                                    int64_t C, const std::vector<int64_t>& offsets,
                                                                    ReduceOp op, bool with_arg) {
  const int64_t M = static_cast<int64_t>(values.size()) / C;
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  auto d_values = to_device(values, device);
  auto d_offsets = to_device(offsets, device);
  auto d_out = poisoned<T>(S * C, device);
  auto d_arg = poisoned<int64_t>(with_arg ? S * C : 0, device);
  MatrixView<int64_t> arg_view;
  if (with_arg) arg_view = MatrixView<int64_t>(d_arg.data(), S, C, device);
  Context ctx(device);
  segment_reduce<T>(d_values.matrix(M, C), d_offsets.view(), op, d_out.matrix(S, C), arg_view, ctx);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

// Default tolerances per element type (float vs a double oracle; double vs long double).
template <class T>
constexpr double kRtol = sizeof(T) == 8 ? 1e-12 : 2e-6;
template <class T>
constexpr double kAtol = sizeof(T) == 8 ? 1e-12 : 1e-6;

template <class T>
void expect_matches_reference(Device device, const std::vector<T>& values, int64_t C,
                              const std::vector<int64_t>& offsets, ReduceOp op, const std::string& label,
                              double rtol = kRtol<T>) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)));
  if (std::is_integral_v<T> && !defined_for_integers(op)) {  // var/std: floating point only
    expect_undefined_for_integers([&] { run_segment_reduce(device, values, C, offsets, op, false); }, op, element_type_name<T>());
    return;
  }
  const bool extremum = has_arg(op);
  auto ref = reference::segment_reduce_ref(values, C, offsets, op);
  auto [out, arg] = run_segment_reduce(device, values, C, offsets, op, extremum);
  if (std::is_floating_point_v<T> && !extremum) {
    EXPECT_TRUE(close_to(out, ref.out, ref.scale, rtol, kAtol<T>));
  } else {
    EXPECT_TRUE(equal_exactly(out, ref.out));
  }
  if (extremum) {
    EXPECT_TRUE(equal_exactly(arg, ref.arg)) << "(arg)";
    auto [out_no_arg, none] = run_segment_reduce(device, values, C, offsets, op, false);
    EXPECT_TRUE(equal_exactly(out_no_arg, ref.out)) << "(min/max without arg)";
  }
}

template <class T>
void sweep_regimes(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const Regime regimes[] = {Regime::Uniform, Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,  Regime::PowerLaw, Regime::SparseEmpty};
  for (Regime regime : regimes) {
    for (int64_t C : {1, 3, 4, 16, 64, 67}) {
      auto offsets = offsets_from_lengths(segment_lengths(rng, regime, 97, 6));
      const int64_t M = offsets.back();
      // Small integers keep integer sums exact and make ties frequent.
      auto values = random_values<T>(rng, M * C, std::is_unsigned_v<T> ? 0 : -20, 20);
      for (ReduceOp op : kOps) {
        expect_matches_reference(device, values, C, offsets, op,
                                 detail::concat("regime=", regime_name(regime), " C=", C));
      }
    }
  }
}

TEST_P(SegmentReduceTest, FloatMatchesReferenceInEveryRegime) { sweep_regimes<float>(device(), 1); }
TEST_P(SegmentReduceTest, Int32MatchesReferenceInEveryRegime) { sweep_regimes<int32_t>(device(), 2); }
TEST_P(SegmentReduceTest, UInt32MatchesReferenceInEveryRegime) { sweep_regimes<uint32_t>(device(), 3); }
TEST_P(SegmentReduceTest, Float64MatchesReferenceInEveryRegime) { sweep_regimes<double>(device(), 31); }

// float64 accumulates in float64: non-integer values in every width (the CUDA
// driver's two-double vector loads need C % 2 == 0), a hub cut into pieces, NaN,
// ties and a value float32 cannot hold.
// mul (torch_scatter's): the empty product is 1, a zero anywhere gives 0, int32
// products wrap modulo 2^32, and float products of factors near 1 (finite in any
// order) match the long double oracle in every regime, through hubs cut in pieces.
TEST_P(SegmentReduceTest, MulFollowsTorchScatterSemantics) {
  auto [out, none] = run_segment_reduce(device(), std::vector<float>{2, 3, 0, 5, -1.5f}, 1, {0, 2, 2, 4, 5},
                                        ReduceOp::Mul, false);
  EXPECT_EQ(out, (std::vector<float>{6, 1, 0, -1.5f}));
  const std::vector<int32_t> big = {65536, 65536, 3, -7, 46341, 46341};
  auto [wrapped, none2] = run_segment_reduce(device(), big, 1, {0, 2, 6}, ReduceOp::Mul, false);
  const uint64_t second = uint64_t{3} * static_cast<uint64_t>(int64_t{-7}) * 46341u * 46341u;
  EXPECT_EQ(wrapped, (std::vector<int32_t>{0, static_cast<int32_t>(static_cast<uint32_t>(second))}));
  auto rng = rng_for(40);
  for (Regime regime : {Regime::Uniform, Regime::OneHub, Regime::PowerLaw, Regime::SparseEmpty}) {
    for (int64_t C : {1, 4, 16, 67}) {
      auto offsets = offsets_from_lengths(segment_lengths(rng, regime, 97, 6));
      auto values = random_values<float>(rng, offsets.back() * C, 0.97, 1.03);
      expect_matches_reference(device(), values, C, offsets, ReduceOp::Mul,
                               detail::concat("regime=", regime_name(regime), " C=", C));
      auto wide = random_values<double>(rng, offsets.back() * C, 0.9, 1.1);
      expect_matches_reference(device(), wide, C, offsets, ReduceOp::Mul, "float64");
    }
  }
  const int64_t hub = (int64_t{1} << 20) / 2 + 33;
  auto offsets = offsets_from_lengths({3, hub, 0, 2});
  auto values = random_values<double>(rng, offsets.back() * 2, 0.999, 1.001);
  expect_matches_reference(device(), values, 2, offsets, ReduceOp::Mul, "float64 hub", 1e-9);
}

TEST_P(SegmentReduceTest, Float64KeepsDoublePrecisionEverywhere) {
  auto rng = rng_for(32);
  for (int64_t C : {1, 2, 3, 4, 16, 129}) {
    auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::PowerLaw, 65, 9));
    auto values = random_values<double>(rng, offsets.back() * C, -1, 1);
    for (ReduceOp op : kOps) expect_matches_reference(device(), values, C, offsets, op, detail::concat("C=", C));
  }
  const int64_t hub = (int64_t{1} << 20) / 2 + 33;
  auto offsets = offsets_from_lengths({3, hub, 0, 2});
  auto values = random_values<double>(rng, offsets.back() * 2, -1, 1);
  values[7] = std::numeric_limits<double>::quiet_NaN();
  for (ReduceOp op : kOps) expect_matches_reference(device(), values, 2, offsets, op, "float64 hub", 1e-11);
  const double fine = 1.0 + 0x1p-40;  // rounds to 1.0f in float32
  const std::vector<double> ties = {fine, fine, -fine, 2.0, fine};
  auto [mx, amx] = run_segment_reduce(device(), ties, 1, {0, 2, 5}, ReduceOp::Max, true);
  EXPECT_EQ(mx, (std::vector<double>{fine, 2.0}));
  EXPECT_EQ(amx, (std::vector<int64_t>{0, 3})) << "ties -> the lower row";
  auto [sum, none] = run_segment_reduce(device(), ties, 1, {0, 2, 5}, ReduceOp::Sum, false);
  EXPECT_EQ(sum[0], 2 * fine);
}

TEST_P(SegmentReduceTest, BoundarySizes) {
  auto rng = rng_for(4);
  for (int64_t S : {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257}) {
    for (int64_t mean : {1, 33}) {
      for (int64_t C : {1, 2, 5, 8, 32, 128, 129}) {
        auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::Uniform, S, mean));
        auto values = random_values<float>(rng, offsets.back() * C);
        for (ReduceOp op : kOps) {
          expect_matches_reference(device(), values, C, offsets, op,
                                   detail::concat("S=", S, " mean=", mean, " C=", C));
        }
      }
    }
  }
}

TEST_P(SegmentReduceTest, OneRowOneSegment) {
  for (ReduceOp op : kOps) expect_matches_reference(device(), std::vector<float>{-2.5f}, 1, {0, 1}, op, "1x1");
}

// Longer than one piece on either backend (2^20 elements on CPU): exercises the
// split of huge segments and the ordered merge of their pieces.
TEST_P(SegmentReduceTest, HugeSegmentsSplitAcrossPieces) {
  auto rng = rng_for(5);
  for (int64_t C : {1, 16}) {
    const int64_t hub = (int64_t{3} << 20) / C + 77;
    std::vector<int64_t> lengths = {5, hub, 0, 3, hub / 2, 1};
    auto offsets = offsets_from_lengths(lengths);
    auto values = random_values<float>(rng, offsets.back() * C, -1, 1);
    for (ReduceOp op : kOps) {
      expect_matches_reference(device(), values, C, offsets, op, detail::concat("hub C=", C), 1e-5);
    }
    auto ivalues = random_values<int32_t>(rng, offsets.back() * C, -1000, 1000);
    for (ReduceOp op : kOps) expect_matches_reference(device(), ivalues, C, offsets, op, "int hub");
  }
}

TEST_P(SegmentReduceTest, TiesGoToTheLowerRowAndEmptySegmentsWriteZeroAndMinusOne) {
  // Segment 0: rows 0..3 all 7 -> arg 0. Segment 1: empty. Segment 2: rows 4..6 with
  // the extremum twice (rows 5 and 6) -> arg 5.
  const std::vector<float> values = {7, 7, 7, 7, 1, 9, 9};
  const std::vector<int64_t> offsets = {0, 4, 4, 7};
  auto [mx, amx] = run_segment_reduce(device(), values, 1, offsets, ReduceOp::Max, true);
  EXPECT_EQ(mx, (std::vector<float>{7, 0, 9}));
  EXPECT_EQ(amx, (std::vector<int64_t>{0, -1, 5}));
  auto [mn, amn] = run_segment_reduce(device(), values, 1, offsets, ReduceOp::Min, true);
  EXPECT_EQ(mn, (std::vector<float>{7, 0, 1}));
  EXPECT_EQ(amn, (std::vector<int64_t>{0, -1, 4}));
  auto [mean, none] = run_segment_reduce(device(), values, 1, offsets, ReduceOp::Mean, false);
  EXPECT_EQ(mean, (std::vector<float>{7, 0, 19.0f / 3.0f}));
}

TEST_P(SegmentReduceTest, NaNPropagatesThroughMinAndMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {1, nan, 5, nan, -inf, -inf, inf, 2};
  const std::vector<int64_t> offsets = {0, 4, 6, 8};
  for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
    auto [out, arg] = run_segment_reduce(device(), values, 1, offsets, op, true);
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(arg[0], 1) << "the first NaN wins";
    EXPECT_EQ(out[1], -inf);
    EXPECT_EQ(arg[1], 4) << "all -inf: the lower row";
    EXPECT_EQ(out[2], op == ReduceOp::Max ? inf : 2.0f);
  }
  expect_matches_reference(device(), values, 1, offsets, ReduceOp::Max, "nan");
}

// Wide rows take the vector min/max path that notes NaN on the side; scattered NaN
// (also in a hub cut into pieces, and in the ragged tail rows) must still win.
TEST_P(SegmentReduceTest, NaNPropagatesInWideRowsAndHubs) {
  auto rng = rng_for(4242);
  for (int64_t C : {16, 64, 67}) {
    std::vector<int64_t> lengths = {0, 1, 3, 7, 33, 130, (int64_t{1} << 20) / C + 77, 5, 0, 2};
    auto offsets = offsets_from_lengths(lengths);
    const int64_t M = offsets.back();
    auto values = random_values<float>(rng, M * C, -50, 50);
    std::uniform_int_distribution<int64_t> pick(0, M * C - 1);
    for (int k = 0; k < 40; ++k) values[pick(rng)] = std::numeric_limits<float>::quiet_NaN();
    values[(offsets[3] + 2) * C + 1] = std::numeric_limits<float>::quiet_NaN();  // a tail row of a 7-row segment
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
      expect_matches_reference(device(), values, C, offsets, op, detail::concat("nan C=", C));
    }
  }
}

TEST_P(SegmentReduceTest, IntegerExtremesAndWrappingSums) {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  const std::vector<int32_t> values = {hi, hi, lo, lo, hi, lo};
  const std::vector<int64_t> offsets = {0, 2, 4, 6};
  for (ReduceOp op : kOps) expect_matches_reference(device(), values, 1, offsets, op, "int32 extremes");
  auto [sum, none] = run_segment_reduce(device(), values, 1, offsets, ReduceOp::Sum, false);
  EXPECT_EQ(sum[0], -2) << "int32 sums wrap modulo 2^32";
  auto [mean, none2] = run_segment_reduce(device(), values, 1, offsets, ReduceOp::Mean, false);
  EXPECT_EQ(mean[0], hi) << "means accumulate in 64 bits";
  const uint32_t umax = std::numeric_limits<uint32_t>::max();
  const std::vector<uint32_t> uvalues = {umax, umax, 0, 1};
  for (ReduceOp op : kOps) expect_matches_reference(device(), uvalues, 2, {0, 1, 2}, op, "uint32 extremes");
}

// Fixed summation order: bitwise identical across runs and, on CPU, across thread counts.
TEST_P(SegmentReduceTest, FloatSumIsBitwiseReproducible) {
  auto rng = rng_for(6);
  auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::PowerLaw, 3000, 200));
  offsets.push_back(offsets.back() + (int64_t{5} << 20) / 16);  // one segment split into pieces
  const int64_t C = 16;
  auto values = random_values<float>(rng, offsets.back() * C, -1, 1);
  std::vector<std::vector<float>> results;
  const int saved_threads = omp_get_max_threads();
  for (int threads : {1, 2, 2, 1}) {
    omp_set_num_threads(threads);
    results.push_back(run_segment_reduce(device(), values, C, offsets, ReduceOp::Sum, false).first);
  }
  omp_set_num_threads(saved_threads);
  for (size_t i = 1; i < results.size(); ++i) {
    ASSERT_EQ(std::memcmp(results[0].data(), results[i].data(), results[0].size() * sizeof(float)), 0)
        << "run " << i << " differs bitwise";
  }
}

// Bad input: a clear error naming the argument, and out/arg untouched.
TEST_P(SegmentReduceTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4, 5, 6}, dev);  // [3, 2]
  struct Case {
    std::vector<int64_t> offsets;
    int64_t out_rows;
    int64_t out_cols;
    ReduceOp op;
    bool with_arg;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{1, 2, 3}, 2, 2, ReduceOp::Sum, false, "offsets[0] (1) must be 0"},
      {{0, 2, 2}, 2, 2, ReduceOp::Sum, false, "must equal the number of rows (3)"},
      {{0, 2, 1, 3}, 3, 2, ReduceOp::Sum, false, "offsets[2] (1)"},
      {{0, 5, 3}, 2, 2, ReduceOp::Max, true, "offsets[1] (5)"},
      {{0, -1, 3}, 2, 2, ReduceOp::Sum, false, "offsets[1] (-1)"},
      {{0, 1, 3}, 3, 2, ReduceOp::Sum, false, "offsets.size() (3) must equal out.rows() + 1 (4)"},
      {{0, 1, 3}, 2, 3, ReduceOp::Sum, false, "out.cols() (3) must equal values.cols() (2)"},
      {{0, 1, 3}, 2, 2, ReduceOp::Sum, true, "arg is only defined for min and max"},
  };
  for (const Case& c : cases) {
    auto offsets = to_device(c.offsets, dev);
    auto out = poisoned<float>(c.out_rows * c.out_cols, dev);
    auto arg = poisoned<int64_t>(c.out_rows * c.out_cols, dev);
    const auto out_before = out.to_host_vector();
    MatrixView<int64_t> arg_view;
    if (c.with_arg) arg_view = MatrixView<int64_t>(arg.data(), c.out_rows, c.out_cols, dev);
    Context ctx(dev);
    try {
      segment_reduce<float>(values.matrix(3, 2), offsets.view(), c.op,
                            MatrixView<float>(out.data(), c.out_rows, c.out_cols, dev), arg_view, ctx);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("segment_reduce"), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::memcmp(out.to_host_vector().data(), out_before.data(), out_before.size() * sizeof(float)), 0)
        << "out changed for case '" << c.needle << "'";
    for (int64_t a : arg.to_host_vector()) EXPECT_EQ(a, -1) << "arg changed for case '" << c.needle << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, SegmentReduceTest, testing::ValuesIn(all_devices()), device_name);

// Views on one device with a context on another are rejected before any work.
TEST(SegmentReduceDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<float> values = {1, 2};
  std::vector<int64_t> offsets = {0, 2};
  std::vector<float> out(1);
  Context cuda_ctx(Device::cuda(0));
  try {
    segment_reduce<float>(MatrixView<const float>(values.data(), 2, 1), VectorView<const int64_t>(offsets.data(), 2),
                          ReduceOp::Sum, MatrixView<float>(out.data(), 1, 1), {}, cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("values is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
}

TEST(SegmentReduceDevices, ValidationCanBeSwitchedOffForTrustedInput) {
  std::vector<float> values = {1, 2, 3};
  std::vector<int64_t> offsets = {0, 1, 3};
  std::vector<float> out(2, -1);
  Context ctx;
  ctx.validate = false;
  segment_reduce<float>(MatrixView<const float>(values.data(), 3, 1), VectorView<const int64_t>(offsets.data(), 3),
                        ReduceOp::Sum, MatrixView<float>(out.data(), 2, 1), {}, ctx);
  EXPECT_EQ(out, (std::vector<float>{1, 5}));
  // The default-context overload gives the same answer.
  std::vector<float> out2(2, -1);
  segment_reduce<float>(MatrixView<const float>(values.data(), 3, 1), VectorView<const int64_t>(offsets.data(), 3),
                        ReduceOp::Sum, MatrixView<float>(out2.data(), 2, 1));
  EXPECT_EQ(out2, out);
}

}  // namespace
}  // namespace edgewise::test
