// bfloat16 products on AVX512-BF16 (vdpbf16ps: two bfloat16 products added into each
// float lane per instruction), for segment_matmul's 512-bit level: the rows of a are
// read as they are stored, the weight once repacked into pairs of its rows, and each
// output element is a float sum rounded to bfloat16 once (the instructions flush
// denormals to zero, so results below 1e-38 may differ from the widened path). Used
// only when the CPU has the extension (available()); otherwise blocks widen to float.
//
// Everything lives in namespace EW_CPU_ISA_NS of the including per-level file, so
// each level's copy is its own symbol.
#pragma once

#include <cstdint>
#include <cstring>

#include "edgewise/kernels/common/half.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && EW_CPU_ISA_LEVEL == 3
#include <immintrin.h>
#define EW_BF16_DOT 1
#define EW_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#else
#define EW_BF16_DOT 0
#endif

#ifndef EW_CPU_ISA_NS
#error "bf16_dot_tiles.hpp belongs to per-ISA translation units (define EW_CPU_ISA_NS)"
#endif

namespace edgewise::segment_matmul_detail::EW_CPU_ISA_NS::bf16_dot {

// Output widths the tiles take: a multiple of 16 lanes, at most 8 vectors a row.
inline bool tiled_width(int64_t n) { return n % 16 == 0 && n >= 16 && n <= 128; }

inline bool available() {
#if EW_BF16_DOT
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

// packed [(k + 1) / 2, n] 32-bit pairs: pair (q, j) holds b[2q][j] (low half) and
// b[2q + 1][j] (high half; 0 past the last row). b is [k, n], or [n, k] when trans_b.
inline void pack_pairs(const BFloat16* b, int64_t k, int64_t n, bool trans_b, uint32_t* packed) {
  const auto at = [&](int64_t p, int64_t j) -> uint32_t {
    if (p >= k) return 0;
    return trans_b ? b[j * k + p].bits : b[p * n + j].bits;
  };
  for (int64_t q = 0; q < (k + 1) / 2; ++q) {
    for (int64_t j = 0; j < n; ++j) packed[q * n + j] = at(2 * q, j) | (at(2 * q + 1, j) << 16);
  }
}

#if EW_BF16_DOT

// The pair (a[2q], a[2q + 1]) of one row as a 32-bit lane; the last of an odd row
// pairs with 0 (never reading past the row).
EW_BF16_TARGET inline uint32_t row_pair(const BFloat16* row, int64_t q, int64_t k) {
  if (2 * q + 1 < k) {
    uint32_t v;
    std::memcpy(&v, row + 2 * q, sizeof v);
    return v;
  }
  return row[2 * q].bits;
}

// kRows rows (starting at `a`, row stride k) by kVectors * 16 output columns.
template <int kRows, int kVectors>
EW_BF16_TARGET void tile(const BFloat16* a, int64_t k, const uint32_t* packed, BFloat16* c) {
  constexpr int64_t n = 16 * kVectors;
  __m512 acc[kRows][kVectors];
  for (int i = 0; i < kRows; ++i)
    for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_setzero_ps();
  for (int64_t q = 0; q < (k + 1) / 2; ++q) {
    __m512i w[kVectors];
    for (int v = 0; v < kVectors; ++v) w[v] = _mm512_loadu_si512(packed + q * n + 16 * v);
    for (int i = 0; i < kRows; ++i) {
      const __m512i x = _mm512_set1_epi32(static_cast<int>(row_pair(a + i * k, q, k)));
      for (int v = 0; v < kVectors; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], (__m512bh)x, (__m512bh)w[v]);
    }
  }
  for (int i = 0; i < kRows; ++i) {
    for (int v = 0; v < kVectors; ++v) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * n + 16 * v), (__m256i)_mm512_cvtneps_pbh(acc[i][v]));
    }
  }
}

// Rows [r0, r1) of c = a @ b with b from pack_pairs; n one of tiled_width's.
template <int kVectors>
EW_BF16_TARGET void rows_of_width(const BFloat16* a, int64_t r0, int64_t r1, int64_t k,
                                  const uint32_t* packed, BFloat16* c) {
  // At most 16 accumulators (of 32 registers), the rest hold weights and the broadcast.
  constexpr int kRows = kVectors <= 2 ? 8 : kVectors <= 4 ? 4 : 2;
  constexpr int64_t n = 16 * kVectors;
  int64_t r = r0;
  for (; r + kRows <= r1; r += kRows) tile<kRows, kVectors>(a + r * k, k, packed, c + r * n);
  for (; r < r1; ++r) tile<1, kVectors>(a + r * k, k, packed, c + r * n);
}

inline void rows(const BFloat16* a, int64_t r0, int64_t r1, int64_t k, const uint32_t* packed, int64_t n,
                 BFloat16* c) {
  switch (n / 16) {
    case 1: rows_of_width<1>(a, r0, r1, k, packed, c); break;
    case 2: rows_of_width<2>(a, r0, r1, k, packed, c); break;
    case 3: rows_of_width<3>(a, r0, r1, k, packed, c); break;
    case 4: rows_of_width<4>(a, r0, r1, k, packed, c); break;
    case 5: rows_of_width<5>(a, r0, r1, k, packed, c); break;
    case 6: rows_of_width<6>(a, r0, r1, k, packed, c); break;
    case 7: rows_of_width<7>(a, r0, r1, k, packed, c); break;
    default: rows_of_width<8>(a, r0, r1, k, packed, c); break;
  }
}

#else

inline void rows(const BFloat16*, int64_t, int64_t, int64_t, const uint32_t*, int64_t, BFloat16*) {}

#endif

}  // namespace edgewise::segment_matmul_detail::EW_CPU_ISA_NS::bf16_dot

#undef EW_BF16_DOT
#undef EW_BF16_TARGET
