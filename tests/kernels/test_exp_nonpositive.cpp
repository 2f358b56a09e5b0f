// exp_nonpositive against the double-precision exp rounded to float: error in ulps over
// a stride through every float in [ln(FLT_MIN), 0], the special values, and the flush
// to zero below ln(FLT_MIN).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "edgewise/kernels/common/exp_nonpositive.hpp"

namespace {

using edgewise::detail::exp_nonpositive;
using edgewise::detail::kExpNonpositiveMin;

// Distance in representable floats between two positive normal floats.
int64_t ulps_apart(float a, float b) {
  return std::abs(static_cast<int64_t>(std::bit_cast<uint32_t>(a)) - static_cast<int64_t>(std::bit_cast<uint32_t>(b)));
}

TEST(ExpNonpositive, WithinOneUlpOfExpOverItsDomain) {
  // Negative floats ordered by bit pattern: 0x80000000 is -0, larger patterns are more
  // negative. A prime stride visits ~1M of them, every binade from 1e-45 to 87.
  const uint32_t last = std::bit_cast<uint32_t>(kExpNonpositiveMin);
  int64_t worst = 0;
  float worst_at = 0;
  int64_t checked = 0;
  for (uint64_t bits = 0x80000000u; bits <= last; bits += 1021) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    const float expected = static_cast<float>(std::exp(static_cast<double>(x)));
    const int64_t ulps = ulps_apart(exp_nonpositive(x), expected);
    if (ulps > worst) {
      worst = ulps;
      worst_at = x;
    }
    ++checked;
  }
  EXPECT_GT(checked, 1000000);
  EXPECT_LE(worst, 1) << "at x = " << worst_at;
  for (float x : {-0.0f, -1e-30f, -0.5f, -0.6931472f, -1.0f, -10.0f, -50.0f, -87.0f, kExpNonpositiveMin}) {
    EXPECT_LE(ulps_apart(exp_nonpositive(x), static_cast<float>(std::exp(static_cast<double>(x)))), 1) << x;
  }
}

TEST(ExpNonpositive, ExactAtZeroAndFlushesBelowTheNormalRange) {
  EXPECT_EQ(exp_nonpositive(0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(-0.0f), 1.0f);
  EXPECT_EQ(exp_nonpositive(std::nextafter(kExpNonpositiveMin, -100.0f)), 0.0f);
  EXPECT_EQ(exp_nonpositive(-100.0f), 0.0f);
  EXPECT_EQ(exp_nonpositive(-1e30f), 0.0f);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(exp_nonpositive(-std::numeric_limits<float>::max()), 0.0f);
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(exp_nonpositive(kExpNonpositiveMin), 0.0f);
}

}  // namespace
