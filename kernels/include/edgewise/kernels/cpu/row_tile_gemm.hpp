// A register-tiled float product of a tall matrix by a small one, c[r] (+)= alpha *
// a[r] @ w, for code compiled once per ISA level (cpu_isa_dispatch.hpp): the engine's
// GEMM (gnn, tall @ weight) and segment_matmul's blocks share it.
//
// Everything here lives in namespace EW_CPU_ISA_NS of the including file, so each
// level's copy is its own symbol and the linker never swaps one level's instructions
// into another's. Includers must define EW_CPU_ISA_NS and compile with floating-point
// contraction on (the default), so every copy of one level is the same code.
//
// Why not Eigen here: given a tall [rows, k] operand and a [k, width] weight that fits
// L1 / L2, a loop that keeps kRowTile rows x width accumulators in registers and
// writes each output row once beats Eigen's packed GEMM 1.4-3x on [1M, 64] outputs at
// k = 64 and 16 (edgewise-bench --filter '^matmul/', AVX-512), and it needs no
// packing, so a 64-row block costs no more per row than a million-row one.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(EW_CPU_ISA_LEVEL) && EW_CPU_ISA_LEVEL == 3 && defined(__AVX512F__)
#include <immintrin.h>
#define EW_ROW_TILE_ZMM 1
#else
#define EW_ROW_TILE_ZMM 0
#endif

#ifndef EW_CPU_ISA_NS
#error "row_tile_gemm.hpp belongs to per-ISA translation units (define EW_CPU_ISA_NS)"
#endif

namespace edgewise::row_tile_gemm::EW_CPU_ISA_NS {

// Whether this level's loops use 512-bit vectors (avx512zmm): twice the lanes, and 32
// registers, so a tile holds more rows before the accumulators spill.
inline constexpr bool kZmm = EW_ROW_TILE_ZMM != 0;

// Rows per register tile for an output width: at most 16 vector accumulators. The
// 512-bit choices were measured per width at k = 16 and 64 (single thread, in and out
// of cache): width 64 with 4 rows runs at 1.8x the 2-row tile, 32 and 8 with 8 rows
// at 1.2-1.6x the 4-row one; 16 and 128 gained nothing from more rows.
template <int kWidth>
inline constexpr int64_t kRowTile =
    kZmm ? (kWidth == 8 || kWidth == 32 ? 8 : kWidth == 64 ? 4 : kWidth == 128 ? 2 : 4) : (kWidth >= 64 ? 2 : 4);

// Outputs at least this large are written with non-temporal stores where streaming()
// allows: they leave the caches anyway, and a plain store first reads each line in
// (1.2-1.3x faster at [100K, 64] outputs, single thread, 512-bit).
inline constexpr int64_t kStreamingMinBytes = int64_t{16} << 20;

// Whether tile(..., stream = true) may write c: this level has 512-bit stores, every
// row of c starts on a 64-byte line (c aligned, the width a multiple of 16), the
// output is overwritten (not added to) and large (total_bytes, the whole call's output).
inline bool streaming(const float* c, int64_t width, bool add, int64_t total_bytes) {
  return kZmm && !add && width % 16 == 0 && reinterpret_cast<std::uintptr_t>(c) % 64 == 0 &&
         total_bytes >= kStreamingMinBytes;
}

// Makes a thread's non-temporal stores visible before other threads read c.
inline void end_streaming() {
#if EW_ROW_TILE_ZMM
  _mm_sfence();
#endif
}

// The widths the tiles are instantiated for.
inline bool is_tiled_width(int64_t n) { return n == 8 || n == 16 || n == 32 || n == 64 || n == 128; }

// One tile: rows [r0, r0 + count) with count <= kRowTile<kWidth>. a [*, k] (row stride
// k), w [k, kWidth] row-major, c [*, kWidth]. add: c += alpha * a @ w; else c = it
// (c's old contents are never read). stream: write with non-temporal stores (only where
// streaming() said so; the thread calls end_streaming() after its last tile).
template <int kWidth>
inline void tile(const float* a, int64_t r0, int64_t count, int64_t k, const float* w, float* c, float alpha,
                 bool add, [[maybe_unused]] bool stream = false) {
  constexpr int64_t kTile = kRowTile<kWidth>;
  float acc[kTile][kWidth] = {};
  if (count == kTile) {
    for (int64_t p = 0; p < k; ++p) {
      const float* wp = w + p * kWidth;
      for (int64_t i = 0; i < kTile; ++i) {
        const float x = a[(r0 + i) * k + p];
#pragma omp simd
        for (int j = 0; j < kWidth; ++j) acc[i][j] += x * wp[j];
      }
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      for (int64_t p = 0; p < k; ++p) {
        const float x = a[(r0 + i) * k + p];
#pragma omp simd
        for (int j = 0; j < kWidth; ++j) acc[i][j] += x * w[p * kWidth + j];
      }
    }
  }
#if EW_ROW_TILE_ZMM
  if constexpr (kWidth % 16 == 0) {
    if (stream) {
      const __m512 scale = _mm512_set1_ps(alpha);
      for (int64_t i = 0; i < count; ++i)
        for (int j = 0; j < kWidth; j += 16)
          _mm512_stream_ps(c + (r0 + i) * kWidth + j, _mm512_mul_ps(scale, _mm512_loadu_ps(&acc[i][j])));
      return;
    }
  }
#endif
  for (int64_t i = 0; i < count; ++i) {
    float* out = c + (r0 + i) * kWidth;
    if (add) {
#pragma omp simd
      for (int j = 0; j < kWidth; ++j) out[j] += alpha * acc[i][j];
    } else {
#pragma omp simd
      for (int j = 0; j < kWidth; ++j) out[j] = alpha * acc[i][j];
    }
  }
}

// Rows [r0, r1) on the calling thread, tile by tile (tiles start at r0); stream as in
// tile(), fenced at the end.
template <int kWidth>
inline void rows(const float* a, int64_t r0, int64_t r1, int64_t k, const float* w, float* c, float alpha, bool add,
                 bool stream) {
  for (int64_t r = r0; r < r1; r += kRowTile<kWidth>) {
    tile<kWidth>(a, r, std::min(kRowTile<kWidth>, r1 - r), k, w, c, alpha, add, stream);
  }
  if (stream) end_streaming();
}

// rows() for a width chosen at run time; false (nothing written) for an untiled width.
inline bool rows_any(const float* a, int64_t r0, int64_t r1, int64_t k, const float* w, int64_t width, float* c,
                     float alpha, bool add, bool stream) {
  switch (width) {
    case 8: rows<8>(a, r0, r1, k, w, c, alpha, add, stream); return true;
    case 16: rows<16>(a, r0, r1, k, w, c, alpha, add, stream); return true;
    case 32: rows<32>(a, r0, r1, k, w, c, alpha, add, stream); return true;
    case 64: rows<64>(a, r0, r1, k, w, c, alpha, add, stream); return true;
    case 128: rows<128>(a, r0, r1, k, w, c, alpha, add, stream); return true;
    default: return false;
  }
}

}  // namespace edgewise::row_tile_gemm::EW_CPU_ISA_NS

#undef EW_ROW_TILE_ZMM
