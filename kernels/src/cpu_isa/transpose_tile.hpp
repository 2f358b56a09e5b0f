// transpose_tile: dst[q * dst_stride + j] = src[j * src_stride + q] for j < rows,
// q < cols, in 8 x 8 blocks through vector registers where the ISA level of the
// including file has them (4-byte elements: AVX2, 2-byte elements: SSE2), the edges
// element by element. Element by element, a strided column store per element bounded
// scatter_reduce's transposed driver at about 3x its row-major time.
//
// Everything lives in namespace EW_CPU_ISA_NS of the including per-level file
// (cpu_isa/dispatch.hpp), so each level's copy is its own function, never merged with
// another level's by the linker.
#pragma once

#include <cstdint>

#include "cpu_isa/dispatch.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace edgewise::transpose_tiles::EW_CPU_ISA_NS {

namespace transpose_detail {

#if defined(__AVX2__)
// Eight rows of eight 4-byte elements into eight columns (the unpack / shuffle /
// 128-bit permute network; bits are moved, never interpreted as floats).
inline void block8x8_4byte(const void* src, int64_t src_stride, void* dst, int64_t dst_stride) {
  const auto* s = static_cast<const float*>(src);
  auto* d = static_cast<float*>(dst);
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * src_stride);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * dst_stride, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(d + (i + 4) * dst_stride, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}
#endif

#if defined(__SSE2__)
// Eight rows of eight 2-byte elements into eight columns (16-, 32-, 64-bit unpacks).
inline void block8x8_2byte(const void* src, int64_t src_stride, void* dst, int64_t dst_stride) {
  const auto* s = static_cast<const uint16_t*>(src);
  auto* d = static_cast<uint16_t*>(dst);
  __m128i r[8], a[8], b[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * src_stride));
  for (int i = 0; i < 4; ++i) {
    a[2 * i] = _mm_unpacklo_epi16(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm_unpackhi_epi16(r[2 * i], r[2 * i + 1]);
  }
  // b[0..3]: columns (0,1), (2,3), (4,5), (6,7) of rows 0-3; b[4..7]: the same of rows 4-7.
  for (int h = 0; h < 2; ++h) {
    const __m128i* x = a + 4 * h;
    b[4 * h + 0] = _mm_unpacklo_epi32(x[0], x[2]);
    b[4 * h + 1] = _mm_unpackhi_epi32(x[0], x[2]);
    b[4 * h + 2] = _mm_unpacklo_epi32(x[1], x[3]);
    b[4 * h + 3] = _mm_unpackhi_epi32(x[1], x[3]);
  }
  for (int i = 0; i < 4; ++i) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * i) * dst_stride), _mm_unpacklo_epi64(b[i], b[i + 4]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * i + 1) * dst_stride), _mm_unpackhi_epi64(b[i], b[i + 4]));
  }
}
#endif

// Whether this ISA level has an 8 x 8 block for T's size (a plain constant: the
// address of a function is no constant expression under the sanitizers).
template <class T>
inline constexpr bool kHasBlock8x8 =
#if defined(__AVX2__)
    sizeof(T) == 4 ||
#endif
#if defined(__SSE2__)
    sizeof(T) == 2 ||
#endif
    false;

template <class T>
inline void block8x8(const T* src, int64_t src_stride, T* dst, int64_t dst_stride) {
#if defined(__AVX2__)
  if constexpr (sizeof(T) == 4) block8x8_4byte(src, src_stride, dst, dst_stride);
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(T) == 2) block8x8_2byte(src, src_stride, dst, dst_stride);
#endif
}

}  // namespace transpose_detail

template <class T>
inline void transpose_tile(const T* __restrict src, int64_t src_stride, int64_t rows, int64_t cols,
                           T* __restrict dst, int64_t dst_stride) {
  int64_t j_done = 0, q_done = 0;
  if constexpr (transpose_detail::kHasBlock8x8<T>) {
    j_done = rows / 8 * 8;
    q_done = cols / 8 * 8;
    for (int64_t j = 0; j < j_done; j += 8) {
      for (int64_t q = 0; q < q_done; q += 8) {
        transpose_detail::block8x8(src + j * src_stride + q, src_stride, dst + q * dst_stride + j, dst_stride);
      }
    }
  }
  // The edges: rows past the last full block (all columns), then the columns past it.
  for (int64_t j = j_done; j < rows; ++j) {
    for (int64_t q = 0; q < cols; ++q) dst[q * dst_stride + j] = src[j * src_stride + q];
  }
  for (int64_t j = 0; j < j_done; ++j) {
    for (int64_t q = q_done; q < cols; ++q) dst[q * dst_stride + j] = src[j * src_stride + q];
  }
}

}  // namespace edgewise::transpose_tiles::EW_CPU_ISA_NS
