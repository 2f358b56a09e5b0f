// exp(x) for x <= 0, as plain float arithmetic that compilers vectorise (libm's expf is
// a call per element). Softmax needs exactly this domain: exp(s - max) <= 1.
//
// Cody-Waite range reduction x = n ln2 + r, |r| <= ln2 / 2, then Cephes' degree-7
// polynomial for exp(r) and 2^n from the exponent bits: within 1 ulp of the correctly
// rounded exp for every float in [-87.3, 0] (checked exhaustively against the double
// exp; tests/kernels/test_exp_nonpositive.cpp checks a stride of them). Below -87.3
// (where expf turns subnormal) it returns 0, so -inf gives 0; NaN gives NaN. Positive x is outside its domain (n would pass 0; the result
// would still be right up to 2^127, but nothing uses it). All integer work is unsigned:
// no undefined behaviour on NaN or huge inputs. Written so that GCC vectorises loops
// that call it without -ffast-math (no branch survives if-conversion).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace edgewise::detail {

inline constexpr float kExpNonpositiveMin = -87.33654f;  // ln(FLT_MIN): smallest normal result

inline float exp_nonpositive(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;  // ln 2 split so that n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  // Clamped at the minimum on the bits (a larger pattern is a more negative float; -inf
  // and negative NaNs clamp too): a float select here would let GCC thread the constant
  // through the whole computation, leaving a branch that blocks vectorisation.
  const uint32_t min_bits = std::bit_cast<uint32_t>(kExpNonpositiveMin);
  const float xc = std::bit_cast<float>(std::min(std::bit_cast<uint32_t>(x), min_bits));
  const float shifted = xc * kLog2e + kRound;
  const float n = shifted - kRound;  // round(xc * log2 e), in [-126, 0]
  const float r = (xc - n * kLn2Hi) - n * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * (r * r) + r + 1.0f;
  // 2^n: n + 127 in the exponent field (the low bits of `shifted` hold n + 2^22 + 2^23).
  const uint32_t biased = std::bit_cast<uint32_t>(shifted) - std::bit_cast<uint32_t>(kRound) + 127u;
  const float scale = std::bit_cast<float>(biased << 23);
  // Selects of constants, then arithmetic, not `x < min ? 0 : y * scale` (GCC keeps that
  // a branch: the multiply may trap): 0 below the minimum, NaN for NaN.
  const float keep = x < kExpNonpositiveMin ? 0.0f : 1.0f;
  const float nan = x != x ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
  return y * scale * keep + nan;
}

}  // namespace edgewise::detail
