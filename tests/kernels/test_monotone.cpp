// common/monotone.hpp: the order-preserving keys and the packed (key << 32) | ~row
// word that the min/max scatter (CPU and CUDA) keeps the largest of.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "edgewise/kernels/common/monotone.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

uint32_t bits_of(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}

// Floats that find mapping bugs: signed zeros, infinities, extremes of each
// binade class, denormals on both sides, and NaNs of both signs and payloads.
std::vector<float> special_floats() {
  const float den = std::numeric_limits<float>::denorm_min();
  const float min_normal = std::numeric_limits<float>::min();
  const float max = std::numeric_limits<float>::max();
  return {0.0f,  -0.0f,       kInf,      -kInf,       den,   -den,  min_normal, -min_normal,
          max,   -max,        1.0f,      -1.0f,       3e-39f, -3e-39f, float_of(0x007FFFFFu), float_of(0x807FFFFFu),
          std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
          float_of(0x7F800001u), float_of(0xFFFFFFFFu), float_of(0x7FFFFFFFu), float_of(0x7FC00123u)};
}

// Random bit patterns cover every binade, denormals and NaNs alike.
std::vector<float> random_floats(uint64_t salt, int n) {
  auto rng = rng_for(salt);
  std::vector<float> v = special_floats();
  for (int i = 0; i < n; ++i) v.push_back(float_of(static_cast<uint32_t>(rng())));
  return v;
}

TEST(Monotone, FloatKeysPreserveOrderOverRandomPairs) {
  auto v = random_floats(101, 3000);
  auto rng = rng_for(102);
  int64_t checked = 0;
  for (int k = 0; k < 200000; ++k) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    if (std::isnan(a) || std::isnan(b)) continue;
    ASSERT_EQ(a < b, monotone_key(a) < monotone_key(b)) << a << " vs " << b;
    ASSERT_EQ(a == b, monotone_key(a) == monotone_key(b)) << a << " vs " << b;
    ++checked;
  }
  EXPECT_GT(checked, 100000);
  // Neighbouring bit patterns across zero and the denormal/normal boundary.
  EXPECT_LT(monotone_key(-std::numeric_limits<float>::denorm_min()), monotone_key(0.0f));
  EXPECT_EQ(monotone_key(-0.0f), monotone_key(0.0f)) << "-0 and +0 compare equal, as in Reducer";
  EXPECT_LT(monotone_key(0.0f), monotone_key(std::numeric_limits<float>::denorm_min()));
  EXPECT_LT(monotone_key(float_of(0x007FFFFFu)), monotone_key(std::numeric_limits<float>::min()));
  EXPECT_LT(monotone_key(-kInf), monotone_key(-std::numeric_limits<float>::max()));
  EXPECT_LT(monotone_key(std::numeric_limits<float>::max()), monotone_key(kInf));
}

TEST(Monotone, IntegerKeysPreserveOrderOverRandomPairs) {
  auto rng = rng_for(103);
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> iv = {lo, lo + 1, -1, 0, 1, hi - 1, hi};
  std::vector<uint32_t> uv = {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu};
  for (int i = 0; i < 2000; ++i) {
    iv.push_back(static_cast<int32_t>(rng()));
    uv.push_back(static_cast<uint32_t>(rng()));
  }
  for (int k = 0; k < 100000; ++k) {
    const int32_t a = iv[rng() % iv.size()], b = iv[rng() % iv.size()];
    ASSERT_EQ(a < b, monotone_key(a) < monotone_key(b)) << a << " vs " << b;
    ASSERT_EQ(a == b, monotone_key(a) == monotone_key(b));
    const uint32_t c = uv[rng() % uv.size()], d = uv[rng() % uv.size()];
    ASSERT_EQ(c < d, monotone_key(c) < monotone_key(d)) << c << " vs " << d;
  }
  EXPECT_EQ(monotone_key(lo), 0u);
  EXPECT_EQ(monotone_key(hi), 0xFFFFFFFFu);
}

TEST(Monotone, InverseRoundTrips) {
  for (float v : random_floats(104, 5000)) {
    if (std::isnan(v)) continue;
    const float back = monotone_value<float>(monotone_key(v));
    if (v == 0.0f) {
      EXPECT_EQ(bits_of(back), 0u) << "-0 and +0 share a key, which decodes to +0";
    } else {
      EXPECT_EQ(bits_of(back), bits_of(v)) << v;
    }
  }
  auto rng = rng_for(105);
  for (int i = 0; i < 5000; ++i) {
    const auto a = static_cast<int32_t>(rng());
    const auto b = static_cast<uint32_t>(rng());
    EXPECT_EQ(monotone_value<int32_t>(monotone_key(a)), a);
    EXPECT_EQ(monotone_value<uint32_t>(monotone_key(b)), b);
  }
}

// NaN beats every number in both directions (Reducer semantics): any NaN gets the
// top key, above +inf for max and above the min key of -inf.
TEST(Monotone, NaNWinsForMaxAndForMin) {
  for (float v : special_floats()) {
    if (!std::isnan(v)) continue;
    EXPECT_EQ(extremum_key<ReduceOp::Max>(v), 0xFFFFFFFFu) << std::hex << bits_of(v);
    EXPECT_EQ(extremum_key<ReduceOp::Min>(v), 0xFFFFFFFFu) << std::hex << bits_of(v);
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_GT(extremum_key<ReduceOp::Max>(nan), extremum_key<ReduceOp::Max>(kInf));
  EXPECT_GT(extremum_key<ReduceOp::Min>(nan), extremum_key<ReduceOp::Min>(-kInf));
  EXPECT_LT(extremum_key<ReduceOp::Max>(kInf), 0xFFFFFFFFu);
  EXPECT_LT(extremum_key<ReduceOp::Min>(-kInf), 0xFFFFFFFFu);
}

// The CPU driver starts its min/max keys at 0 and lets "greater" fill them:
// no float, NaN or not, may have key 0 (integers can, and are handled apart).
TEST(Monotone, FloatExtremumKeysAreNeverZero) {
  for (float v : random_floats(115, 20000)) {
    EXPECT_NE(extremum_key<ReduceOp::Max>(v), 0u) << std::hex << bits_of(v);
    EXPECT_NE(extremum_key<ReduceOp::Min>(v), 0u) << std::hex << bits_of(v);
  }
  EXPECT_EQ(extremum_key<ReduceOp::Max>(std::numeric_limits<int32_t>::min()), 0u);
  EXPECT_EQ(extremum_key<ReduceOp::Min>(std::numeric_limits<uint32_t>::max()), 0u);
}

TEST(Monotone, MinKeysReverseTheOrder) {
  auto v = random_floats(106, 2000);
  auto rng = rng_for(107);
  for (int k = 0; k < 100000; ++k) {
    const float a = v[rng() % v.size()], b = v[rng() % v.size()];
    if (std::isnan(a) || std::isnan(b)) continue;
    ASSERT_EQ(a < b, extremum_key<ReduceOp::Min>(a) > extremum_key<ReduceOp::Min>(b)) << a << " vs " << b;
    ASSERT_EQ(a > b, extremum_key<ReduceOp::Max>(a) > extremum_key<ReduceOp::Max>(b)) << a << " vs " << b;
  }
  EXPECT_GT(extremum_key<ReduceOp::Min>(std::numeric_limits<int32_t>::min()),
            extremum_key<ReduceOp::Min>(std::numeric_limits<int32_t>::max()));
  EXPECT_GT(extremum_key<ReduceOp::Min>(0u), extremum_key<ReduceOp::Min>(1u));
}

// Decoding a min/max key gives the value back, except for zeros and NaNs, which
// are flagged so the caller reads the exact bits from the winning row.
TEST(Monotone, ExtremumValuesDecodeExactlyOrSayTheyCannot) {
  for (float v : random_floats(113, 5000)) {
    bool amb_max = false, amb_min = false;
    const float mx = extremum_value<ReduceOp::Max, float>(extremum_key<ReduceOp::Max>(v), amb_max);
    const float mn = extremum_value<ReduceOp::Min, float>(extremum_key<ReduceOp::Min>(v), amb_min);
    const bool merged = std::isnan(v) || v == 0.0f;
    EXPECT_EQ(amb_max, merged) << v;
    EXPECT_EQ(amb_min, merged) << v;
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(mx) && std::isnan(mn));
    } else if (!merged) {
      EXPECT_EQ(bits_of(mx), bits_of(v)) << v;
      EXPECT_EQ(bits_of(mn), bits_of(v)) << v;
    } else {
      EXPECT_EQ(mx, 0.0f);
      EXPECT_EQ(mn, 0.0f);
    }
  }
  auto rng = rng_for(114);
  for (int i = 0; i < 5000; ++i) {
    const auto a = static_cast<int32_t>(rng());
    const auto b = static_cast<uint32_t>(rng());
    bool amb = true;
    EXPECT_EQ((extremum_value<ReduceOp::Min, int32_t>(extremum_key<ReduceOp::Min>(a), amb)), a);
    EXPECT_FALSE(amb);
    EXPECT_EQ((extremum_value<ReduceOp::Max, uint32_t>(extremum_key<ReduceOp::Max>(b), amb)), b);
    EXPECT_FALSE(amb);
  }
}

TEST(Monotone, PackedWordsOrderByKeyThenLowerRow) {
  const int64_t top = kPackedMaxRow;
  EXPECT_GT(pack_key_row(5, 3), pack_key_row(5, 7)) << "equal keys: the lower row wins";
  EXPECT_GT(pack_key_row(5, 0), pack_key_row(5, top));
  EXPECT_GT(pack_key_row(6, top), pack_key_row(5, 0)) << "the key dominates the row";
  EXPECT_GT(pack_key_row(0, top), kPackedEmpty) << "every real element beats the empty word";
  for (int64_t row : {int64_t{0}, int64_t{1}, int64_t{12345}, int64_t{0x7FFFFFFF}, int64_t{0x80000000}, top}) {
    for (uint32_t key : {0u, 1u, 0x80000000u, 0xFFFFFFFFu}) {
      const uint64_t w = pack_key_row(key, row);
      EXPECT_EQ(packed_key(w), key);
      EXPECT_EQ(packed_row(w), row);
    }
  }
  EXPECT_EQ(packed_row(kPackedEmpty), -1);
}

// The property both drivers rely on: the largest word over a sequence names the
// same winner (row, and so value) as Reducer folding the sequence in row order.
template <ReduceOp Op>
void expect_word_max_matches_reducer(const std::vector<float>& pool, uint64_t salt) {
  using R = Reducer<Op, float>;
  auto rng = rng_for(salt);
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 12);
    std::vector<float> seq(static_cast<size_t>(n));
    for (auto& x : seq) x = pool[rng() % pool.size()];
    float acc = R::identity();
    int64_t arg = -1;
    uint64_t word = kPackedEmpty;
    for (int r = 0; r < n; ++r) {
      R::accumulate(acc, arg, seq[r], r);
      const uint64_t w = extremum_word<Op>(seq[r], r);
      word = w > word ? w : word;
    }
    ASSERT_EQ(packed_row(word), arg) << "trial " << trial;
    ASSERT_EQ(bits_of(seq[static_cast<size_t>(packed_row(word))]), bits_of(acc));
  }
}

TEST(Monotone, WordMaximumMatchesReducerWithTiesNaNsAndSignedZeros) {
  // A small pool makes ties (equal values, -0 vs +0, several NaNs) frequent.
  const std::vector<float> pool = {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                                   -std::numeric_limits<float>::quiet_NaN(), float_of(0x7FC00123u),
                                   std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()};
  expect_word_max_matches_reducer<ReduceOp::Max>(pool, 108);
  expect_word_max_matches_reducer<ReduceOp::Min>(pool, 109);
  auto wide = random_floats(110, 64);
  expect_word_max_matches_reducer<ReduceOp::Max>(wide, 111);
  expect_word_max_matches_reducer<ReduceOp::Min>(wide, 112);
}

}  // namespace
}  // namespace edgewise::test

namespace edgewise::test {
namespace {

double double_of(uint64_t u) {
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
}
uint64_t bits_of_double(double v) {
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}

// Doubles: random bit patterns (every binade, denormals, NaNs) plus the specials.
std::vector<double> random_doubles(uint64_t salt, int n) {
  auto rng = rng_for(salt);
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {0.0, -0.0, inf, -inf, std::numeric_limits<double>::denorm_min(),
                           -std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::max(), 1.0, 1.0 + 0x1p-52, -1.0,
                           std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
                           double_of(0x7FF0000000000001ull), double_of(0xFFFFFFFFFFFFFFFFull)};
  for (int i = 0; i < n; ++i) v.push_back(double_of(rng()));
  return v;
}

// The 64-bit keys of double (used by the two-pass double min/max scatter) preserve
// order, merge -0/+0, give every NaN the top key, never give a number key 0, and
// decode exactly except for the flagged zero/NaN classes.
TEST(Monotone, DoubleKeysPreserveOrderAndDecode) {
  static_assert(std::is_same_v<MonotoneKey<double>, uint64_t>);
  auto v = random_doubles(121, 3000);
  auto rng = rng_for(122);
  for (int k = 0; k < 200000; ++k) {
    const double a = v[rng() % v.size()], b = v[rng() % v.size()];
    if (std::isnan(a) || std::isnan(b)) continue;
    ASSERT_EQ(a < b, monotone_key(a) < monotone_key(b)) << a << " vs " << b;
    ASSERT_EQ(a == b, monotone_key(a) == monotone_key(b)) << a << " vs " << b;
    ASSERT_EQ(a > b, extremum_key<ReduceOp::Max>(a) > extremum_key<ReduceOp::Max>(b));
    ASSERT_EQ(a < b, extremum_key<ReduceOp::Min>(a) > extremum_key<ReduceOp::Min>(b));
  }
  for (double x : v) {
    bool amb_max = false, amb_min = false;
    const double mx = extremum_value<ReduceOp::Max, double>(extremum_key<ReduceOp::Max>(x), amb_max);
    const double mn = extremum_value<ReduceOp::Min, double>(extremum_key<ReduceOp::Min>(x), amb_min);
    const bool merged = std::isnan(x) || x == 0.0;
    EXPECT_EQ(amb_max, merged) << x;
    EXPECT_EQ(amb_min, merged) << x;
    if (std::isnan(x)) {
      EXPECT_EQ(extremum_key<ReduceOp::Max>(x), top_key<double>());
      EXPECT_EQ(extremum_key<ReduceOp::Min>(x), top_key<double>());
    } else {
      EXPECT_NE(extremum_key<ReduceOp::Max>(x), 0u);
      EXPECT_NE(extremum_key<ReduceOp::Min>(x), 0u);
      EXPECT_LT(extremum_key<ReduceOp::Max>(x), top_key<double>());
      if (!merged) {
        EXPECT_EQ(bits_of_double(mx), bits_of_double(x));
        EXPECT_EQ(bits_of_double(mn), bits_of_double(x));
      }
    }
  }
  EXPECT_EQ(monotone_key(-0.0), monotone_key(0.0));
}

}  // namespace
}  // namespace edgewise::test
