// gather_rows per-row logic both drivers run (EW_HD): which source row feeds an
// output row, the offsets check, and the raw-word problem descriptions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::gather_rows_detail {

// Copies move elements as unsigned words of their size: one driver per element
// size (2, 4, 8 bytes) serves every element type, and NaN payloads pass unchanged.
template <std::size_t Bytes>
struct WordOf;
template <>
struct WordOf<2> {
  using type = uint16_t;
};
template <>
struct WordOf<4> {
  using type = uint32_t;
};
template <>
struct WordOf<8> {
  using type = uint64_t;
};
template <class T>
using WordFor = typename WordOf<sizeof(T)>::type;

// gather_rows_csr on words (sizes as in gather_rows.hpp). offsets_stride is S + 1,
// or 0 when every batch shares one row of offsets.
template <class W>
struct CsrSpread {
  const W* values;         // [A * S, C]
  const int64_t* offsets;  // [Ao, S + 1]
  W* out;                  // [A * M, C]
  int64_t batches, S, M, C, offsets_stride;
};

// gather_rows_coo on words. index_stride is E, or 0 when every batch shares one index row.
template <class W, class I>
struct CooPick {
  const W* values;  // [A * S, C]
  const I* index;   // [Ai, E]
  W* out;           // [A * E, C]
  int64_t batches, S, E, C, index_stride;
  // Check each index as its row is copied (the rows of bad ones are skipped) instead
  // of trusting a check made before.
  bool check_index = false;
};

// Whether offsets[s] of one batch's row [S + 1] keeps the contract: within [0, M] and
// not below offsets[s - 1].
EW_HD_INLINE bool offset_ok(const int64_t* offsets, int64_t s, int64_t M) {
  const int64_t lo = s == 0 ? 0 : offsets[s - 1];
  return offsets[s] >= lo && offsets[s] <= M;
}

// The segment s with offsets[s] <= r < offsets[s + 1] under one batch's offsets
// [S + 1], or -1 when no segment covers row r. The last offset above r (upper bound)
// steps over empty segments, which cover no row.
EW_HD_INLINE int64_t segment_of_row(const int64_t* offsets, int64_t S, int64_t r) {
  if (r < offsets[0] || r >= offsets[S]) return -1;
  int64_t lo = 0, hi = S;  // offsets[lo] <= r < offsets[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= r) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Element o of out [A * M, C] (flat) of gather_rows_csr.
template <class W>
EW_HD_INLINE W csr_element(const CsrSpread<W>& p, int64_t o) {
  const int64_t row = o / p.C, c = o - row * p.C;
  const int64_t a = row / p.M, r = row - a * p.M;
  const int64_t s = segment_of_row(p.offsets + a * p.offsets_stride, p.S, r);
  return s < 0 ? W{0} : p.values[(a * p.S + s) * p.C + c];
}

// Element o of out [A * E, C] (flat) of gather_rows_coo.
template <class W, class I>
EW_HD_INLINE W coo_element(const CooPick<W, I>& p, int64_t o) {
  const int64_t row = o / p.C, c = o - row * p.C;
  const int64_t a = row / p.E, e = row - a * p.E;
  const int64_t i = static_cast<int64_t>(p.index[a * p.index_stride + e]);
  return p.values[(a * p.S + i) * p.C + c];
}

}  // namespace edgewise::gather_rows_detail
