// gather_rows CPU driver: fixed blocks of output rows over OpenMP threads. Each block
// owns its output rows, so there are no atomics and the result is the same at any
// thread count or assignment; rows are copied with compile-time widths where the
// width is common. Blocks go to threads dynamically: which thread copies a block
// changes nothing in the result, and a thread whose core is busy with another process
// then takes fewer blocks instead of holding up the others.
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/index_range.hpp"
#include "gather_rows/gather_rows_backends.hpp"

namespace edgewise::gather_rows_detail {

namespace {

// About this many elements per block: several blocks per thread for balance, few
// enough that locating a block's first segment (a binary search) costs nothing.
constexpr int64_t kBlockElements = int64_t{1} << 14;
// The source rows one gather_rows_coo pass keeps in cache when batches share an index
// (under half of a core's 2 MB L2 here).
constexpr int64_t kCachedSourceBytes = int64_t{1} << 20;
// Segments shorter than this on average (output rows per segment) are spread through
// per-block segment ids when batches share offsets (spread_by_ids).
constexpr int64_t kShortSegmentRows = 32;
// Below this many output elements one thread copies everything.
constexpr int64_t kParallelElements = int64_t{1} << 15;
// Outputs larger than this are written around the caches (non-temporal stores): a
// regular store first reads in each line it writes, a third of a row copy's memory
// traffic. 64 MB and up (1M rows of 16 floats) copied 2-2.5x faster so on one thread;
// a 32 MB output can stay in a large last-level cache, where the caller then finds it
// (1M rows of 16 bfloat16 spread from 10K: 1.0 ms with regular stores, 1.5 ms
// streamed, on a 32 MB L3).
constexpr int64_t kStreamBytes = int64_t{32} << 20;

// Rows of N words stream in 16-byte pieces (SSE2; elsewhere every store is regular).
template <int64_t N, class W>
inline constexpr bool kStreamable =
#if defined(__SSE2__)
    N > 0 && (N * sizeof(W)) % 16 == 0;
#else
    false;
#endif

// Streamed rows also need a 16-byte aligned output (then every row is).
template <class W>
bool streams_out(const W* out, int64_t elements) {
  return elements * static_cast<int64_t>(sizeof(W)) > kStreamBytes && reinterpret_cast<uintptr_t>(out) % 16 == 0;
}

// Streaming stores are weakly ordered: a block publishes its rows before the barrier.
template <bool Stream>
inline void end_block() {
#if defined(__SSE2__)
  if constexpr (Stream) _mm_sfence();
#endif
}

template <int64_t N>
using Cols = std::integral_constant<int64_t, N>;

// f(Cols<C>{}) for the widths GNN features take (a fixed trip count becomes a few
// vector moves, where a memcpy call per 64-byte row would cost more than the copy),
// f(Cols<0>{}) for any other width (a runtime-length copy).
template <class F>
void visit_cols(int64_t cols, F&& f) {
  switch (cols) {
    case 1: return f(Cols<1>{});
    case 2: return f(Cols<2>{});
    case 4: return f(Cols<4>{});
    case 8: return f(Cols<8>{});
    case 16: return f(Cols<16>{});
    case 32: return f(Cols<32>{});
    case 64: return f(Cols<64>{});
    case 128: return f(Cols<128>{});
    default: return f(Cols<0>{});
  }
}

template <int64_t N, bool Stream, class W>
inline void copy_row(W* dst, const W* src, int64_t cols) {
  if constexpr (Stream) {
#if defined(__SSE2__)
    static_assert(kStreamable<N, W>);
    auto* d = reinterpret_cast<char*>(dst);
    const auto* from = reinterpret_cast<const char*>(src);
    for (std::size_t i = 0; i < N * sizeof(W); i += 16) {
      _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
    }
#endif
  } else if constexpr (N > 0) {
    std::memcpy(dst, src, N * sizeof(W));
  } else {
    std::memcpy(dst, src, static_cast<std::size_t>(cols) * sizeof(W));
  }
}

// n copies of one row; a one-element row is a fill, which vectorises.
template <int64_t N, bool Stream, class W>
inline void fill_rows(W* dst, const W* row, int64_t n, int64_t cols) {
  if constexpr (N == 1) {
    std::fill(dst, dst + n, *row);
  } else {
    const int64_t C = N > 0 ? N : cols;
    for (int64_t i = 0; i < n; ++i) copy_row<N, Stream>(dst + i * C, row, cols);
  }
}

template <class W>
inline void zero_rows(W* dst, int64_t n, int64_t cols) {
  std::memset(dst, 0, static_cast<std::size_t>(n * cols) * sizeof(W));
}

// Rows [lo, hi) of batch a: the walk from the segment of row lo on, one fill per segment.
template <int64_t N, bool Stream, class W>
void spread_rows(const CsrSpread<W>& p, int64_t a, int64_t lo, int64_t hi) {
  const int64_t C = N > 0 ? N : p.C;
  const int64_t* offsets = p.offsets + a * p.offsets_stride;
  const W* values = p.values + a * p.S * C;
  W* out = p.out + a * p.M * C;
  const int64_t first = std::min(hi, std::max(lo, offsets[0]));
  zero_rows(out + lo * C, first - lo, C);  // before offsets[0]
  int64_t r = first;
  if (r < offsets[p.S]) {
    for (int64_t s = segment_of_row(offsets, p.S, r); s < p.S && r < hi; ++s) {
      const int64_t end = std::min(hi, offsets[s + 1]);
      fill_rows<N, Stream>(out + r * C, values + s * C, end - r, C);
      r = std::max(r, end);
    }
  }
  zero_rows(out + r * C, hi - r, C);  // from offsets[S] on
}

// Batches that share offsets, with short segments (dim=-1 of a 2-D src: one-element
// rows, many batches): each block of output rows finds its segments once, then every
// batch copies through them; a block reads one short run of each batch's source rows.
// The walk would pay one short fill per segment and batch (segments of ~10 rows and 16
// batches took 1.4x longer than torch's segment ids + index_select).
template <int64_t N, bool Stream, class W>
void spread_by_ids(const CsrSpread<W>& p) {
  const int64_t C = N > 0 ? N : p.C;
  const int64_t block = std::max<int64_t>(1, kBlockElements / C);
  const int64_t blocks = (p.M + block - 1) / block;
  const int64_t* offsets = p.offsets;
#pragma omp parallel if (p.batches * p.M * C >= kParallelElements)
  {
    std::vector<int64_t> ids(static_cast<std::size_t>(std::min(block, p.M)));  // -1: no segment
#pragma omp for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t lo = b * block, hi = std::min(p.M, lo + block);
      int64_t r = lo;
      for (const int64_t first = std::min(hi, std::max(lo, offsets[0])); r < first; ++r) ids[r - lo] = -1;
      if (r < offsets[p.S]) {
        for (int64_t s = segment_of_row(offsets, p.S, r); s < p.S && r < hi; ++s) {
          for (const int64_t end = std::min(hi, offsets[s + 1]); r < end; ++r) ids[r - lo] = s;
        }
      }
      for (; r < hi; ++r) ids[r - lo] = -1;
      for (int64_t a = 0; a < p.batches; ++a) {
        const W* values = p.values + a * p.S * C;
        W* out = p.out + a * p.M * C;
        for (r = lo; r < hi; ++r) {
          const int64_t s = ids[r - lo];
          if (s >= 0) {
            copy_row<N, Stream>(out + r * C, values + s * C, C);
          } else {
            zero_rows(out + r * C, 1, C);
          }
        }
      }
      end_block<Stream>();
    }
  }
}

template <int64_t N, bool Stream, class W>
void spread(const CsrSpread<W>& p) {
  if (p.offsets_stride == 0 && p.batches > 1 && p.M < kShortSegmentRows * p.S) return spread_by_ids<N, Stream>(p);
  const int64_t total = p.batches * p.M;
  const int64_t block = std::max<int64_t>(1, kBlockElements / p.C);
  const int64_t blocks = (total + block - 1) / block;
#pragma omp parallel for schedule(dynamic) if (total * p.C >= kParallelElements)
  for (int64_t b = 0; b < blocks; ++b) {
    // A block may straddle batches (M small): one walk per batch it touches.
    for (int64_t row = b * block, end = std::min(total, row + block); row < end;) {
      const int64_t a = row / p.M, lo = row - a * p.M, hi = std::min(p.M, lo + (end - row));
      spread_rows<N, Stream>(p, a, lo, hi);
      row += hi - lo;
    }
    end_block<Stream>();
  }
}

// Rows [lo, hi) of batch a. Check: an index outside [0, S) leaves its row unwritten;
// returns the first such position in [lo, hi), or hi.
template <int64_t N, bool Stream, bool Check, class W, class I>
inline int64_t pick_rows(const CooPick<W, I>& p, int64_t a, int64_t lo, int64_t hi) {
  const int64_t C = N > 0 ? N : p.C;
  const I* index = p.index + a * p.index_stride;
  const W* values = p.values + a * p.S * C;
  W* out = p.out + a * p.E * C;
  int64_t first_bad = hi;
  for (int64_t e = lo; e < hi; ++e) {
    if constexpr (Check) {
      if (!detail::index_in_range(index[e], p.S)) {
        first_bad = std::min(first_bad, e);
        continue;
      }
    }
    copy_row<N, Stream>(out + e * C, values + static_cast<int64_t>(index[e]) * C, C);
  }
  return first_bad;
}

// Check: returns the first (row-major) position of index outside [0, S), or -1.
template <int64_t N, bool Stream, bool Check, class W, class I>
int64_t pick(const CooPick<W, I>& p) {
  const int64_t C = N > 0 ? N : p.C;
  const int64_t total = p.batches * p.E;
  const bool parallel = total * C >= kParallelElements;
  const int64_t none = std::numeric_limits<int64_t>::max();
  int64_t first_bad = none;  // a position in the index array
  if (p.index_stride == 0 && p.batches > 1) {
    // One index for every batch (dim=-1 of a 2-D src: narrow rows, many batches).
    // Groups of batches whose source rows fit in a core's cache together, and in each
    // group blocks of index positions with every batch of the group inside: the
    // index is read from memory once per group rather than once per batch, and the
    // random reads stay in cache (all batches at once outgrew it: 64 rows of 100K
    // floats took ~1.4x longer than torch's index_select batch by batch).
    const int64_t row_bytes = std::max<int64_t>(1, p.S * C * static_cast<int64_t>(sizeof(W)));
    const int64_t group = std::clamp<int64_t>(kCachedSourceBytes / row_bytes, 1, p.batches);
    const int64_t groups = (p.batches + group - 1) / group;
    const int64_t block = std::max<int64_t>(1, kBlockElements / C);
    const int64_t blocks = (p.E + block - 1) / block;
#pragma omp parallel for schedule(dynamic) reduction(min : first_bad) if (parallel)
    for (int64_t t = 0; t < groups * blocks; ++t) {
      const int64_t g = t / blocks, b = t - g * blocks;
      const int64_t lo = b * block, hi = std::min(p.E, lo + block);
      for (int64_t a = g * group, end = std::min(p.batches, a + group); a < end; ++a) {
        const int64_t bad = pick_rows<N, Stream, Check>(p, a, lo, hi);
        if (bad < hi) first_bad = std::min(first_bad, bad);
      }
      end_block<Stream>();
    }
    return first_bad == none ? -1 : first_bad;
  }
  const int64_t block = std::max<int64_t>(1, kBlockElements / C);
  const int64_t blocks = (total + block - 1) / block;
#pragma omp parallel for schedule(dynamic) reduction(min : first_bad) if (parallel)
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t row = b * block, end = std::min(total, row + block); row < end;) {
      const int64_t a = row / p.E, lo = row - a * p.E, hi = std::min(p.E, lo + (end - row));
      const int64_t bad = pick_rows<N, Stream, Check>(p, a, lo, hi);
      if (bad < hi) first_bad = std::min(first_bad, a * p.index_stride + bad);
      row += hi - lo;
    }
    end_block<Stream>();
  }
  return first_bad == none ? -1 : first_bad;
}

}  // namespace

template <class W>
void gather_rows_csr_cpu(const CsrSpread<W>& p) {
  visit_cols(p.C, [&](auto n) {
    constexpr int64_t N = decltype(n)::value;
    if constexpr (kStreamable<N, W>) {
      if (streams_out(p.out, p.batches * p.M * p.C)) return spread<N, true>(p);
    }
    spread<N, false>(p);
  });
}

template <class W, class I>
int64_t gather_rows_coo_cpu(const CooPick<W, I>& p) {
  int64_t first_bad = -1;
  const auto run = [&](auto check) {
    constexpr bool Check = decltype(check)::value;
    visit_cols(p.C, [&](auto n) {
      constexpr int64_t N = decltype(n)::value;
      if constexpr (kStreamable<N, W>) {
        if (streams_out(p.out, p.batches * p.E * p.C)) {
          first_bad = pick<N, true, Check>(p);
          return;
        }
      }
      first_bad = pick<N, false, Check>(p);
    });
  };
  if (p.check_index) {
    run(std::true_type{});
  } else {
    run(std::false_type{});
  }
  return first_bad;
}

#define EW_INSTANTIATE(W)                                                   \
  template void gather_rows_csr_cpu<W>(const CsrSpread<W>&);              \
  template int64_t gather_rows_coo_cpu<W, int32_t>(const CooPick<W, int32_t>&); \
  template int64_t gather_rows_coo_cpu<W, int64_t>(const CooPick<W, int64_t>&);
EW_INSTANTIATE(uint16_t)
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(uint64_t)
#undef EW_INSTANTIATE

}  // namespace edgewise::gather_rows_detail
