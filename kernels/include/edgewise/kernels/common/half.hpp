// Half (IEEE binary16, torch.float16) and BFloat16 (torch.bfloat16): 16-bit
// storage types whose arithmetic runs in float (EW_HD, no CUDA headers, so the
// CPU and CUDA backends share one conversion and give the same bits).
//
// Conversions: to float is exact; from float rounds to nearest, ties to even (as
// torch's c10::Half / c10::BFloat16 do), overflow gives +-inf, NaN stays NaN.
// Reductions over these types accumulate in float and round once on output
// (ComputeType<T> and common/reducer.hpp).
#pragma once

#include <cstdint>
#include <type_traits>

#include "edgewise/kernels/common/float_bits.hpp"
#include "edgewise/kernels/common/hd.hpp"

namespace edgewise {

namespace half_detail {

// binary16 from float, round to nearest even (F. Giesen's branch-light form: the
// subnormal range is rounded by one float addition of a power of two).
EW_HD_INLINE uint16_t half_bits_from_float(float f) {
  uint32_t x = float_bits(f);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint32_t h;
  if (x >= 0x47800000u) {  // |f| >= 65536, inf or NaN: inf (or the quiet NaN)
    h = x > 0x7F800000u ? 0x7E00u : 0x7C00u;
  } else if (x < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    constexpr uint32_t kMagic = 126u << 23;  // 0.5: aligns the 10 result bits at the bottom
    const float aligned = float_from_bits(x) + float_from_bits(kMagic);
    h = float_bits(aligned) - kMagic;
  } else {
    const uint32_t odd = (x >> 13) & 1u;
    x += (static_cast<uint32_t>(15 - 127) << 23) + 0xFFFu + odd;  // rebias, round half to even
    h = x >> 13;  // carries into the exponent (and up to inf) as rounding requires
  }
  return static_cast<uint16_t>(h | (sign >> 16));
}

EW_HD_INLINE float float_from_half_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return float_from_bits(sign | 0x7F800000u | (mantissa << 13));  // inf / NaN
  if (exponent != 0) return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // m * 2^-24, exact
  return sign != 0 ? -magnitude : magnitude;
}

EW_HD_INLINE uint16_t bfloat16_bits_from_float(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

EW_HD_INLINE float float_from_bfloat16_bits(uint16_t b) { return float_from_bits(static_cast<uint32_t>(b) << 16); }

}  // namespace half_detail

// Explicit from float (it rounds), implicit to float (exact), so arithmetic and
// comparisons on these types happen in float.
struct Half {
  uint16_t bits;

  Half() = default;
  EW_HD_INLINE explicit Half(float f) : bits(half_detail::half_bits_from_float(f)) {}
  EW_HD_INLINE operator float() const { return half_detail::float_from_half_bits(bits); }
  EW_HD_INLINE static Half from_bits(uint16_t b) {
    Half h;
    h.bits = b;
    return h;
  }
};

struct BFloat16 {
  uint16_t bits;

  BFloat16() = default;
  EW_HD_INLINE explicit BFloat16(float f) : bits(half_detail::bfloat16_bits_from_float(f)) {}
  EW_HD_INLINE operator float() const { return half_detail::float_from_bfloat16_bits(bits); }
  EW_HD_INLINE static BFloat16 from_bits(uint16_t b) {
    BFloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(Half) == 2 && std::is_trivially_copyable_v<Half>);
static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>);

// Whether T is one of the 16-bit float storage types.
template <class T>
inline constexpr bool kHalfType = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Whether T holds floating-point values (NaN, infinities): the built-in ones and the 16-bit ones.
template <class T>
inline constexpr bool kFloatingElement = std::is_floating_point_v<T> || kHalfType<T>;

// The type arithmetic on T runs in: float for the 16-bit types, T itself otherwise.
template <class T>
using ComputeType = std::conditional_t<kHalfType<T>, float, T>;

}  // namespace edgewise
