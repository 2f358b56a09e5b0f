// The element types torch_scatter adds to the reductions' original four: int64,
// float16 (Half) and bfloat16 (BFloat16), through segment_reduce and scatter_reduce
// (both index types) against the sequential oracle: every op, segment regimes,
// 64-bit extremes and wrapping, floor means, and the 16-bit types' float
// accumulation with one rounding. Also the 16-bit conversions themselves, against
// an oracle that enumerates every 16-bit pattern.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "edgewise/kernels/common/half.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "scatter_reduce_ref.hpp"
#include "segment_reduce_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using ReduceDTypesTest = DeviceTest;

template <class T>
std::pair<std::vector<T>, std::vector<int64_t>> run_segment(Device device, const std::vector<T>& values, int64_t C,
                                                             const std::vector<int64_t>& offsets, ReduceOp op,
                                                             bool with_arg) {
  const int64_t M = static_cast<int64_t>(values.size()) / C, S = static_cast<int64_t>(offsets.size()) - 1;
  auto d_values = to_device(values, device);
  auto d_offsets = to_device(offsets, device);
  auto d_out = poisoned<T>(S * C, device);
  auto d_arg = poisoned<int64_t>(with_arg ? S * C : 0, device);
  MatrixView<int64_t> arg_view;
  if (with_arg) arg_view = d_arg.matrix(S, C);
  Context ctx(device);
  segment_reduce<T>(d_values.matrix(M, C), d_offsets.view(), op, d_out.matrix(S, C), arg_view, ctx);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

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
  if (with_arg) arg_view = d_arg.matrix(S, C);
  Context ctx(device);
  scatter_reduce<T, I>(d_values.matrix(M, C), d_index.view(), op, d_out.matrix(S, C), arg_view, ctx);
  return {d_out.to_host_vector(), with_arg ? d_arg.to_host_vector() : std::vector<int64_t>{}};
}

// Runs both entry points (scatter with int32 and int64 indices) on one grouping.
template <class T, class Check>
void run_every_path(Device device, const std::vector<T>& values, int64_t C, const std::vector<int64_t>& offsets,
                    ReduceOp op, bool with_arg, Check&& check) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<int64_t> index64;
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t r = offsets[s]; r < offsets[s + 1]; ++r) index64.push_back(s);
  }
  // Scatter sees the rows in another order: reverse them (and the values with them).
  const int64_t M = offsets.back();
  std::vector<T> reversed(values.size());
  std::vector<int64_t> rindex(index64.rbegin(), index64.rend());
  for (int64_t r = 0; r < M; ++r) std::copy_n(values.begin() + (M - 1 - r) * C, C, reversed.begin() + r * C);
  const std::vector<int32_t> rindex32(rindex.begin(), rindex.end());
  {
    SCOPED_TRACE("segment_reduce");
    auto [out, arg] = run_segment(device, values, C, offsets, op, with_arg);
    check(out, arg, false);
  }
  {
    SCOPED_TRACE("scatter_reduce int64 index, rows reversed");
    auto [out, arg] = run_scatter(device, reversed, C, rindex, S, op, with_arg);
    check(out, arg, true);
  }
  {
    SCOPED_TRACE("scatter_reduce int32 index, rows reversed");
    auto [out, arg] = run_scatter(device, reversed, C, rindex32, S, op, with_arg);
    check(out, arg, true);
  }
}

// A reversed row r' = M - 1 - r: the arg the oracle gives in forward row order,
// mapped to the reversed input (ties then resolve to the lowest reversed row, i.e.
// the last forward row among the tied: the oracle is rerun on the reversed order).
template <class T>
reference::ReduceResult<T> reversed_reference(const std::vector<T>& values, int64_t C,
                                              const std::vector<int64_t>& offsets, ReduceOp op) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1, M = offsets.back();
  std::vector<std::vector<int64_t>> rows_of(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t r = offsets[s + 1] - 1; r >= offsets[s]; --r) rows_of[s].push_back(M - 1 - r);
  }
  std::vector<T> reversed(values.size());
  for (int64_t r = 0; r < M; ++r) std::copy_n(values.begin() + (M - 1 - r) * C, C, reversed.begin() + r * C);
  for (auto& rows : rows_of) std::sort(rows.begin(), rows.end());
  return reference::reduce_rows_ref(reversed, C, rows_of, op);
}

// ---- int64 ----

void expect_int64_matches_reference(Device device, const std::vector<int64_t>& values, int64_t C,
                                    const std::vector<int64_t>& offsets, ReduceOp op, const std::string& label) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)));
  if (!defined_for_integers(op)) {
    expect_undefined_for_integers([&] { run_segment(device, values, C, offsets, op, false); }, op, "int64");
    return;
  }
  const bool extremum = has_arg(op);
  const auto forward = reference::segment_reduce_ref(values, C, offsets, op);
  const auto backward = reversed_reference(values, C, offsets, op);
  run_every_path(device, values, C, offsets, op, extremum, [&](auto& out, auto& arg, bool reversed) {
    const auto& ref = reversed ? backward : forward;
    EXPECT_TRUE(equal_exactly(out, ref.out));
    if (extremum) {
      EXPECT_TRUE(equal_exactly(arg, ref.arg)) << "(arg)";
    }
  });
}

TEST_P(ReduceDTypesTest, Int64MatchesReferenceInEveryRegime) {
  auto rng = rng_for(701);
  for (Regime regime : {Regime::Uniform, Regime::AllEmpty, Regime::OneHub, Regime::PowerLaw, Regime::SparseEmpty}) {
    for (int64_t C : {1, 3, 16}) {
      const auto offsets = offsets_from_lengths(segment_lengths(rng, regime, 61, 6));
      const int64_t M = offsets.back();
      // Values beyond 2^53 (no double holds them) with many ties: small numbers
      // scaled by 2^40 plus an odd offset.
      auto values = random_values<int64_t>(rng, M * C, -20, 20);
      for (auto& v : values) v = v * (int64_t{1} << 40) + (v & 1);
      for (ReduceOp op : kAllReduceOps) {
        expect_int64_matches_reference(device(), values, C, offsets, op,
                                       detail::concat("regime=", regime_name(regime), " C=", C));
      }
    }
  }
}

TEST_P(ReduceDTypesTest, Int64ExtremesWrapAndMeansFloor) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> values = {hi, 1, lo, lo, -7, 4, lo, hi};
  const std::vector<int64_t> offsets = {0, 2, 4, 6, 8};
  for (ReduceOp op : kAllReduceOps) expect_int64_matches_reference(device(), values, 1, offsets, op, "extremes");
  auto [sum, none] = run_segment(device(), values, 1, offsets, ReduceOp::Sum, false);
  EXPECT_EQ(sum[0], lo) << "int64 sums wrap modulo 2^64";
  EXPECT_EQ(sum[1], 0);
  auto [mean, none2] = run_segment(device(), values, 1, offsets, ReduceOp::Mean, false);
  EXPECT_EQ(mean[2], -2) << "-3 / 2 rounds toward -inf, as torch_scatter's scatter_mean";
  EXPECT_EQ(mean[3], -1) << "(lo + hi) / 2 = -1 / 2 floors to -1";
  auto [mx, arg] = run_scatter(device(), values, 1, std::vector<int64_t>{0, 0, 1, 1, 2, 2, 3, 3}, 4, ReduceOp::Max,
                               true);
  EXPECT_EQ(mx, (std::vector<int64_t>{hi, lo, 4, hi}));
  EXPECT_EQ(arg, (std::vector<int64_t>{0, 2, 5, 7})) << "all-lowest output: the lower row";
}

// ---- float16 / bfloat16 ----

template <class H>
constexpr double kHalfRtol = std::is_same_v<H, Half> ? 2e-3 : 1.6e-2;  // about 2 ulp

template <class H>
std::vector<float> as_float(const std::vector<H>& v) {
  return std::vector<float>(v.begin(), v.end());
}

// The oracle runs in float on the same (exactly representable) values; its float
// result, rounded once to H, is what a float accumulation rounded once must match
// (exactly for min/max and arg, within ~2 ulp of H otherwise).
template <class H>
void expect_half_matches_reference(Device device, const std::vector<H>& values, int64_t C,
                                   const std::vector<int64_t>& offsets, ReduceOp op, const std::string& label) {
  SCOPED_TRACE(label + " op=" + std::string(to_string(op)) + " type=" + element_type_name<H>());
  const bool extremum = has_arg(op);
  const auto values_f = as_float(values);
  const auto forward = reference::segment_reduce_ref(values_f, C, offsets, op);
  const auto backward = reversed_reference(values_f, C, offsets, op);
  run_every_path(device, values, C, offsets, op, extremum, [&](auto& out, auto& arg, bool reversed) {
    const auto& ref = reversed ? backward : forward;
    std::vector<float> want;
    for (float f : ref.out) want.push_back(static_cast<float>(H(f)));
    if (extremum) {
      EXPECT_TRUE(equal_exactly(as_float(out), want));
      EXPECT_TRUE(equal_exactly(arg, ref.arg)) << "(arg)";
    } else {
      EXPECT_TRUE(close_to(as_float(out), want, ref.scale, kHalfRtol<H>, 1e-3));
    }
  });
}

template <class H>
void sweep_half(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int> quarter(-60, 60);
  for (Regime regime : {Regime::Uniform, Regime::AllSingleton, Regime::OneHub, Regime::PowerLaw, Regime::SparseEmpty}) {
    for (int64_t C : {1, 3, 16, 32, 64}) {  // 16 / 32 / 64: min / max's constant-width folds
      const auto offsets = offsets_from_lengths(segment_lengths(rng, regime, 53, 6));
      const int64_t M = offsets.back();
      std::vector<H> values(static_cast<size_t>(M * C));
      for (auto& v : values) v = H(static_cast<float>(quarter(rng)) / 4.0f);  // exact in both 16-bit types
      for (ReduceOp op : kAllReduceOps) {
        if (op == ReduceOp::Mul) continue;  // products: HalfMulAndMomentsAccumulateInFloat
        expect_half_matches_reference(device, values, C, offsets, op,
                                      detail::concat("regime=", regime_name(regime), " C=", C));
      }
    }
  }
}

TEST_P(ReduceDTypesTest, Float16MatchesReferenceInEveryRegime) { sweep_half<Half>(device(), 711); }
TEST_P(ReduceDTypesTest, BFloat16MatchesReferenceInEveryRegime) { sweep_half<BFloat16>(device(), 712); }

template <class H>
void mul_and_moments_accumulate_in_float(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int> near_one(-16, 16);
  const auto offsets = offsets_from_lengths(segment_lengths(rng, Regime::PowerLaw, 40, 6));
  const int64_t C = 4, M = offsets.back();
  std::vector<H> values(static_cast<size_t>(M * C));
  for (auto& v : values) v = H(1.0f + static_cast<float>(near_one(rng)) / 64.0f);
  for (ReduceOp op : {ReduceOp::Mul, ReduceOp::Var, ReduceOp::Std, ReduceOp::Mean}) {
    expect_half_matches_reference(device, values, C, offsets, op, "near one");
  }
}

TEST_P(ReduceDTypesTest, HalfMulAndMomentsAccumulateInFloat) {
  mul_and_moments_accumulate_in_float<Half>(device(), 713);
  mul_and_moments_accumulate_in_float<BFloat16>(device(), 714);
}

// A 16-bit running sum stalls (2048 + 1 is 2048 in float16, 256 + 1 is 256 in
// bfloat16); a float one rounded once does not.
template <class H>
void sums_round_once(Device device) {
  const int64_t M = 3000;
  const std::vector<H> ones(static_cast<size_t>(M), H(1.0f));
  const H want(3000.0f);
  auto [seg, a] = run_segment(device, ones, 1, {0, M}, ReduceOp::Sum, false);
  EXPECT_EQ(seg[0].bits, want.bits) << static_cast<float>(seg[0]);
  auto [sc, b] = run_scatter(device, ones, 1, std::vector<int64_t>(static_cast<size_t>(M), 0), 1, ReduceOp::Sum, false);
  EXPECT_EQ(sc[0].bits, want.bits) << static_cast<float>(sc[0]);
  auto [mean, c] = run_segment(device, ones, 1, {0, M}, ReduceOp::Mean, false);
  EXPECT_EQ(static_cast<float>(mean[0]), 1.0f);
}

TEST_P(ReduceDTypesTest, HalfSumsAccumulateInFloatAndRoundOnce) {
  sums_round_once<Half>(device());
  sums_round_once<BFloat16>(device());
}

// NaN wins min/max (the first NaN is the arg), -0 keeps its sign bit, infinities compare.
template <class H>
void half_special_values(Device device) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const std::vector<H> column = {H(1.0f), H(nan), H(-inf), H(-0.0f), H(-inf), H(inf)};
  const std::vector<int64_t> offsets = {0, 3, 4, 6};  // {1, NaN, -inf}, {-0}, {-inf, inf}
  for (int64_t C : {1, 16, 64}) {  // the generic fold and constant-width ones
    std::vector<H> values;
    for (const H& v : column) values.insert(values.end(), static_cast<size_t>(C), v);
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max}) {
      run_every_path(device, values, C, offsets, op, true, [&](auto& out, auto& arg, bool reversed) {
        SCOPED_TRACE(detail::concat(to_string(op), " C=", C));
        for (int64_t c = 0; c < C; ++c) {
          EXPECT_TRUE(std::isnan(static_cast<float>(out[c])));
          EXPECT_EQ(arg[c], reversed ? 4 : 1);
          EXPECT_EQ(out[C + c].bits, H(-0.0f).bits) << "-0 comes out bit for bit";
          EXPECT_EQ(static_cast<float>(out[2 * C + c]), op == ReduceOp::Max ? inf : -inf);
        }
      });
    }
  }
}

TEST_P(ReduceDTypesTest, HalfNaNSignedZeroAndInfinities) {
  half_special_values<Half>(device());
  half_special_values<BFloat16>(device());
}

// Every element type and op through both entry points, then long double arithmetic:
// code vectorised with MMX registers and no emms (GCC 12 did this to an int32 max
// reduction) leaves the x87 unit broken, and every long double after it is NaN.
template <class T>
void run_every_op(Device device) {
  std::vector<T> values(64 * 5);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(static_cast<float>(i % 7));
  const std::vector<int64_t> offsets = {0, 10, 10, 40, 64};
  for (ReduceOp op : kAllReduceOps) {
    if (std::is_integral_v<T> && !defined_for_integers(op)) continue;
    run_every_path(device, values, 5, offsets, op, has_arg(op), [](auto&, auto&, bool) {});
    run_every_path(device, values, 5, offsets, op, false, [](auto&, auto&, bool) {});
  }
}

TEST_P(ReduceDTypesTest, KernelsLeaveTheX87UnitUsable) {
#define EW_RUN_EVERY_OP(T) run_every_op<T>(device());
  EW_REDUCE_ELEMENT_TYPES(EW_RUN_EVERY_OP)
#undef EW_RUN_EVERY_OP
  volatile long double x = 1.5L;
  const long double y = x * 3;
  EXPECT_EQ(y, 4.5L) << "an x87 operation after the kernels gave " << static_cast<double>(y);
}

INSTANTIATE_TEST_SUITE_P(Devices, ReduceDTypesTest, testing::ValuesIn(all_devices()), device_name);

// ---- the conversions (host; the CUDA backend compiles the same EW_HD code) ----

// The value of a binary16 / bfloat16 bit pattern, computed from the format's
// definition in double (no shared code with half.hpp).
double decode(uint16_t bits, int mantissa_bits, int exponent_bias) {
  const int exponent_bits = 15 - mantissa_bits;
  const int exponent = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int mantissa = bits & ((1 << mantissa_bits) - 1);
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == (1 << exponent_bits) - 1) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  }
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - exponent_bias - mantissa_bits);
  return sign * std::ldexp(mantissa + (1 << mantissa_bits), exponent - exponent_bias - mantissa_bits);
}

// Every pattern decodes exactly; every float rounds to the nearest pattern (ties to
// the even one, beyond the largest finite value to infinity), checked against the
// sorted table of all finite patterns.
template <class H>
void conversions_are_exact_and_round_to_nearest_even(int mantissa_bits, int bias) {
  std::vector<std::pair<double, uint16_t>> finite;
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const double want = decode(bits, mantissa_bits, bias);
    const float got = static_cast<float>(H::from_bits(bits));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << b;
      ASSERT_TRUE(std::isnan(static_cast<float>(H(got)))) << "NaN stays NaN " << std::hex << b;
      continue;
    }
    ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
    ASSERT_EQ(std::signbit(got), (bits & 0x8000) != 0) << std::hex << b;
    ASSERT_EQ(H(got).bits, bits) << "round trip " << std::hex << b;
    if (!std::isinf(want) && !(want == 0 && (bits & 0x8000))) finite.emplace_back(want, bits);
  }
  std::sort(finite.begin(), finite.end());
  const double largest = finite.back().first;
  const double ulp_at_top = largest - finite[finite.size() - 2].first;
  auto rng = rng_for(720 + static_cast<uint64_t>(mantissa_bits));
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = any_bits(rng);
    // Bias toward float16's range (subnormals included) and exact halfway points.
    if (i % 4 == 0) u = (u & 0x807FFFFFu) | ((98u + (u % 56u)) << 23);  // 2^-29 .. 2^26
    if (i % 4 == 1) u = (u & 0xFFFFE000u) | 0x1000u;                    // float16 halfway (normal range)
    if (i % 4 == 2) u = (u & 0xFFFF0000u) | 0x8000u;                    // bfloat16 halfway
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (std::isnan(f)) continue;
    const double a = std::fabs(static_cast<double>(f));
    uint16_t want;
    if (a >= largest + ulp_at_top / 2) {
      want = mantissa_bits == 10 ? 0x7C00 : 0x7F80;  // infinity
    } else {
      auto hi = std::lower_bound(finite.begin(), finite.end(), std::make_pair(a, uint16_t{0}));
      if (hi == finite.end()) --hi;
      auto lo = hi == finite.begin() ? hi : hi - 1;
      const double d_lo = a - lo->first, d_hi = hi->first - a;
      const auto* pick = d_lo < d_hi ? &*lo : d_hi < d_lo ? &*hi : ((lo->second & 1) == 0 ? &*lo : &*hi);
      want = pick->second;
    }
    if (std::signbit(f)) want = static_cast<uint16_t>(want | 0x8000);
    ASSERT_EQ(H(f).bits, want) << "float " << f << " bits " << std::hex << u;
  }
}

TEST(HalfConversions, Float16ExactAndRoundsToNearestEven) { conversions_are_exact_and_round_to_nearest_even<Half>(10, 15); }
TEST(HalfConversions, BFloat16ExactAndRoundsToNearestEven) {
  conversions_are_exact_and_round_to_nearest_even<BFloat16>(7, 127);
}

}  // namespace
}  // namespace edgewise::test
