// galloping_search logic shared by the CPU and CUDA drivers (EW_HD): segment-record
// checks, tile bookkeeping and the per-tile search (binary-search seed, exponential
// probes from the previous answer, bounded binary search, linear scan <= 16).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "edgewise/kernels/common/float_bits.hpp"
#include "edgewise/kernels/common/hd.hpp"
#include "edgewise/kernels/galloping_search.hpp"

namespace edgewise::galloping_search_detail {

// Below this many candidates a linear scan beats further halving: the candidates
// share one or two cache lines and the scan's branch is well predicted.
constexpr int64_t kLinearScan = 16;

struct Segment {
  int64_t value_offset, value_count, query_offset, query_count;
};

// Segment s of `records` [S, 4]; no records means the one implicit segment that
// covers every value and every query (the batched lower_bound overload).
EW_HD_INLINE Segment load_segment(const int64_t* records, int64_t s, int64_t value_size, int64_t query_size) {
  if (records == nullptr) return {0, value_size, 0, query_size};
  const int64_t* r = records + 4 * s;
  return {r[0], r[1], r[2], r[3]};
}

// Whether [offset, offset + count) is a valid range of a view of `size` elements
// (written so that no sum can overflow).
EW_HD_INLINE bool range_in_bounds(int64_t offset, int64_t count, int64_t size) {
  return offset >= 0 && count >= 0 && offset <= size && count <= size - offset;
}

// The validation bits a segment record raises by itself (0: well formed).
// max_query_count < 0 means no cap.
EW_HD_INLINE uint32_t segment_errors(const Segment& seg, int64_t value_size, int64_t query_size,
                                     int64_t max_query_count) {
  uint32_t bits = 0;
  if (!range_in_bounds(seg.value_offset, seg.value_count, value_size)) bits |= GallopingSearchErrors::kValueRange;
  if (!range_in_bounds(seg.query_offset, seg.query_count, query_size) ||
      (max_query_count >= 0 && seg.query_count > max_query_count)) {
    bits |= GallopingSearchErrors::kQueryRange;
  }
  return bits;
}

// Tiles of a well-formed segment with `query_count` queries.
EW_HD_INLINE int64_t tile_count(int64_t query_count, int64_t queries_per_tile) {
  return (query_count + queries_per_tile - 1) / queries_per_tile;
}

// The segment owning global tile `tile`, given the exclusive scan tile_start[0..S]
// of per-segment tile counts: the last s with tile_start[s] <= tile (segments with
// no tiles share their start with the next one and are skipped).
EW_HD_INLINE int64_t segment_of_tile(const int64_t* tile_start, int64_t segments, int64_t tile) {
  int64_t lo = 0, hi = segments + 1;  // first index with tile_start[i] > tile, minus one
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (tile_start[mid] <= tile) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

// Value accessors: position i of a segment's sorted sequence.
// prefetch(i) asks the CPU's caches for position i ahead of its use (the GPU has
// no use for it: its threads hide latency by numbers).
#if defined(__CUDA_ARCH__)
#define EW_GALLOP_PREFETCH(address) ((void)(address))
#else
#define EW_GALLOP_PREFETCH(address) __builtin_prefetch(address)
#endif

template <class T>
struct DirectValues {
  const T* base;  // values + valueOffset
  EW_HD_INLINE T operator()(int64_t i) const { return base[i]; }
  EW_HD_INLINE void prefetch(int64_t i) const { EW_GALLOP_PREFETCH(base + i); }
};

template <class T>
struct OrderedValues {
  const T* values;
  const int64_t* order;  // value_order + valueOffset
  EW_HD_INLINE T operator()(int64_t i) const { return values[order[i]]; }
  EW_HD_INLINE void prefetch(int64_t i) const { EW_GALLOP_PREFETCH(order + i); }
};

// Lower bound of q in [lo, lo + n), given that the answer lies in [lo, lo + n]:
// halving without branches on the comparison (a conditional move on CPU, no
// divergence on GPU) until at most kLinearScan candidates remain, then a scan.
// Without a branch the CPU cannot speculate the next probe, so both candidates of
// the next step are prefetched: over values far larger than the cache this keeps
// two probes in flight instead of one.
template <class A, class T>
EW_HD_INLINE int64_t bounded_lower_bound(const A& a, int64_t lo, int64_t n, T q) {
  while (n > kLinearScan) {
    const int64_t half = n / 2;
    const int64_t next_half = (n - half) / 2;
    a.prefetch(lo + next_half - 1);
    a.prefetch(lo + half + next_half - 1);
    // The answer is > lo + half - 1 iff a(lo + half - 1) < q; either way it stays
    // within [lo, lo + n - half] after the update.
    lo = a(lo + half - 1) < q ? lo + half : lo;
    n -= half;
  }
  while (n > 0 && a(lo) < q) {
    ++lo;
    --n;
  }
  return lo;
}

// Lower bound of q in [0, size) when it is known to be >= from (the answer for an
// earlier, not larger query): probe from + step, + 2 step, + 4 step, ... until a value
// >= q or the end, then search the last gap with bounded_lower_bound. `step` (>= 1) is
// the caller's guess of the distance: the previous query's advance. Dense queries
// advance by about one value, so they probe from + 1, + 2, + 4 as a textbook gallop;
// sparse ones advance by about N/Q, and starting there saves the ~log2(N/Q) probes,
// each a cache miss, that doubling up from 1 would spend on every query.
template <class A, class T>
EW_HD_INLINE int64_t gallop_lower_bound(const A& a, int64_t size, int64_t from, T q, int64_t step) {
  if (from >= size || !(a(from) < q)) return from;
  int64_t lo = from + 1;  // a(from) < q: the answer is past it
  int64_t probe = from + step;
  a.prefetch(from + 2 * step);  // the probe after next: two probes in flight
  while (probe < size && a(probe) < q) {
    lo = probe + 1;
    step *= 2;
    probe = from + step;
    a.prefetch(from + 2 * step);
  }
  const int64_t hi = probe < size ? probe : size;  // a(hi) >= q, or hi is the end
  return bounded_lower_bound(a, lo, hi - lo, q);
}

// Searches one tile: queries[0, count) against the segment's `size` values (as
// seen through `a`), writing value_offset + lower bound to out[0, count).
// Returns the validation bits the tile raised (kDecreasingQueries, kNonFiniteQuery).
template <class T, class A>
EW_HD_INLINE uint32_t search_tile(const A& a, int64_t size, int64_t value_offset, const T* __restrict__ queries,
                                  int64_t count, int64_t* __restrict__ out) {
  uint32_t bits = 0;
  bool seeded = false;  // whether an earlier non-NaN query of this tile was answered
  T previous{};
  int64_t at = 0;
  int64_t advance = 1;  // how far the previous gallop moved (at least 1): the next first probe
  for (int64_t i = 0; i < count; ++i) {
    const T q = queries[i];
    if (is_non_finite(q)) {
      bits |= GallopingSearchErrors::kNonFiniteQuery;
      if (is_nan(q)) {  // no lower bound: sorts last, and leaves the cursor alone
        out[i] = value_offset + size;
        continue;
      }
    }
    if (!seeded) {
      at = bounded_lower_bound(a, int64_t{0}, size, q);  // the tile's seed
      seeded = true;
    } else if (q < previous) {
      bits |= GallopingSearchErrors::kDecreasingQueries;
      at = bounded_lower_bound(a, int64_t{0}, size, q);  // fall back: still exact
    } else {
      const int64_t next = gallop_lower_bound(a, size, at, q, advance);
      advance = next - at > 1 ? next - at : 1;
      at = next;
    }
    previous = q;
    out[i] = value_offset + at;
  }
  return bits;
}

// Searches tile `rank` of a well-formed segment. `order` null: direct values.
template <class T>
EW_HD_INLINE uint32_t search_segment_tile(const T* values, const int64_t* order, const T* queries, const Segment& seg,
                                          int64_t rank, int64_t queries_per_tile, int64_t* positions) {
  const int64_t first = rank * queries_per_tile;
  const int64_t rest = seg.query_count - first;
  const int64_t count = rest < queries_per_tile ? rest : queries_per_tile;
  const int64_t q0 = seg.query_offset + first;
  if (order != nullptr) {
    return search_tile(OrderedValues<T>{values, order + seg.value_offset}, seg.value_count, seg.value_offset,
                       queries + q0, count, positions + q0);
  }
  return search_tile(DirectValues<T>{values + seg.value_offset}, seg.value_count, seg.value_offset, queries + q0,
                     count, positions + q0);
}

}  // namespace edgewise::galloping_search_detail
