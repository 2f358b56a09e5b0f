// Bit views of floating-point values and NaN / infinity tests, identical on host
// and device (no libm): the one copy every kernel uses.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise {

EW_HD_INLINE uint32_t float_bits(float v) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(v);
#else
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

EW_HD_INLINE float float_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

EW_HD_INLINE uint64_t double_bits(double v) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(v));
#else
  uint64_t u;
  std::memcpy(&u, &v, sizeof u);
  return u;
#endif
}

EW_HD_INLINE double double_from_bits(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double v;
  std::memcpy(&v, &u, sizeof v);
  return v;
#endif
}

template <class T>
EW_HD_INLINE bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;  // the build never enables -ffast-math, which would break this
  } else if constexpr (std::is_integral_v<T>) {
    return false;
  } else {  // the 16-bit float types of half.hpp, through their exact float value
    const float f = static_cast<float>(v);
    return f != f;
  }
}

template <class T>
EW_HD_INLINE bool is_non_finite(T v) {
  if constexpr (std::is_same_v<T, float>) {
    return (float_bits(v) & 0x7F800000u) == 0x7F800000u;
  } else if constexpr (std::is_same_v<T, double>) {
    return (double_bits(v) & 0x7FF0000000000000ull) == 0x7FF0000000000000ull;
  } else if constexpr (std::is_integral_v<T>) {
    return false;
  } else {  // the 16-bit float types of half.hpp
    return is_non_finite(static_cast<float>(v));
  }
}

}  // namespace edgewise
