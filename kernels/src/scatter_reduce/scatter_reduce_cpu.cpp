// scatter_reduce CPU driver (OpenMP): no atomics, three strategies.
//
// Partials (S small next to M): each thread folds a static, contiguous range of
// rows into its own [S, C] state (the thread-private partials: they stay
// in cache when S x C is small); after a barrier the threads merge the partials
// output by output, in thread order, and write out. Clearing and merging cost
// threads x S x C, and a state that outgrows the caches slows every row.
//
// Owner-computes (S large): thread t owns outputs [S t / T, S (t+1) / T). Every
// thread scans the index in chunks, compacts the rows it owns into a small list
// without branches (a data-dependent branch would mispredict on most rows), and
// folds them in row order, prefetching ahead. No partials and no merge; the index
// is read once per thread, which is cheap next to the rows.
//
// Grouped (S x C state beyond the last-level cache): a stable counting sort of the
// rows by output, then each output folded whole from its rows, gathered in order,
// in a one-row state that stays in L1 (run_grouped). Each output still folds its
// rows in increasing order, so results equal owner-computes' bit for bit.
//
// State per output element:
//  - every op but min/max: Reducer's accumulator (float, int64, uint64), folded
//    with the trait's accumulate and merged with its merge, and, when finalize
//    needs it (mean), a row count per output.
//  - min/max of 32-bit types at the AVX-512 level: the packed word (key << 32) | ~row
//    of monotone.hpp, folded with a 64-bit max, exactly as the CUDA driver's
//    atomicMax: a larger key wins, an equal key keeps the lower row, 0 is "nothing
//    yet". One array and one vpmaxuq per 4 elements; measured 1.2-1.6x faster than
//    the key and row arrays below (C = 16, S = 10^4 and 5 x 10^4). Below AVX-512
//    there is no unsigned 64-bit max, and the emulation is slower than those arrays.
//  - min/max otherwise (double's 64-bit key leaves no room for the row): the key and
//    the row in two arrays, updated by compare and select. Rows reach a state in
//    increasing order, so a strictly larger key wins and ties keep the lower row,
//    as in Reducer. Partials merge by (key, row) (extremum_pair_beats) and
//    finalize with extremum_finalize, both shared with the CUDA driver.
// Row widths are compile-time constants where visit_row_width specialises them.
// The partition is static, so results are bitwise identical across runs with the
// same thread count.
//
// Not done, measured slower: radix-partitioning the rows by output range first
// (count, place (row, output) pairs, then fold each range with its state in L2):
// 1.4x (max + arg) to 2.6x (sum) slower than partials at C = 16, S = 100 to
// 5 x 10^4 on a 2-core Xeon; the extra passes over the index and the pairs cost
// more than the state misses they avoid. Nor sweeping owner-computes once per block
// of 16 or 32 columns so that a block's state fits the L3 cache: at M = 10^6,
// S = 10^5, C = 64 on a 2-core AMD EPYC (32 MB L3) max with arg went from 64-68 to
// 74-79 ms in bfloat16 and from 52-58 to 65-67 ms in float32. Each sweep reads one
// line of each row's pair, and the adjacent-line prefetch fetches both, so the rows
// are read twice or four times over; the same blocks as separate contiguous arrays
// ran in 39-47 ms, but making them is another pass over the input.
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/row_groups_cpu.hpp"
#include "cpu_isa/row_width.hpp"
#include "cpu_isa/transpose_tile.hpp"
#include "scatter_reduce/scatter_reduce_backends.hpp"
#include "scatter_reduce/scatter_reduce_core.hpp"

namespace edgewise::scatter_reduce_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {

// Whether this copy is compiled with a vector unsigned 64-bit max (AVX-512's vpmaxuq).
#if defined(__AVX512F__)
constexpr bool kVectorU64Max = true;
#else
constexpr bool kVectorU64Max = false;
#endif

constexpr int64_t kOwnerChunk = 4096;  // rows scanned per compaction step (the list stays in L1)
constexpr int64_t kPrefetchAhead = 8;  // rows whose state is prefetched ahead of the fold

// Asks for the cache lines of `bytes` at p (a state row we are about to update).
inline void prefetch_bytes(const void* p, int64_t bytes) {
  for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(static_cast<const char*>(p) + b, 1);
}

// Accumulator state (every op that is not PackedExtremum): `partials` arrays of
// [S, C] Reducer accumulators (+ [S] row counts when finalize needs them).
template <class T, ReduceOp Op, int W>
struct AccState {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;
  static constexpr bool kCount = R::kFinalizeUsesCount;
  static constexpr int64_t kStateBytes = sizeof(Acc);
  static constexpr double kPartialsShare = 0.15;  // see choose_partials
  Acc* acc;
  int64_t* counts;
  int64_t S, C;

  AccState(Context& ctx, int64_t partials, int64_t segments, int64_t cols) : S(segments), C(cols) {
    ScratchLayout layout;
    const std::size_t acc_at = layout.add<Acc>(partials * S * C);
    const std::size_t counts_at = layout.add<int64_t>(kCount ? partials * S : 0);
    void* base = ctx.scratch(layout.bytes());
    acc = ScratchLayout::at<Acc>(base, acc_at);
    counts = ScratchLayout::at<int64_t>(base, counts_at);
  }
  int64_t width() const { return W > 0 ? W : C; }

  // Outputs [s_begin, s_end) of partial p start empty.
  void clear(int64_t p, int64_t s_begin, int64_t s_end) {
    std::fill(acc + (p * S + s_begin) * C, acc + (p * S + s_end) * C, R::identity());
    if constexpr (kCount) std::fill(counts + p * S + s_begin, counts + p * S + s_end, int64_t{0});
  }
  void prefetch(int64_t p, int64_t s) const {
    prefetch_bytes(acc + (p * S + s) * C, width() * static_cast<int64_t>(sizeof(Acc)));
  }
  void fold(int64_t p, int64_t s, const T* __restrict x, int64_t) {
    Acc* __restrict a = acc + (p * S + s) * C;
    const int64_t w = width();
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) R::accumulate(a[j], x[j]);
    if constexpr (kCount) ++counts[p * S + s];
  }
  // Partial 0 of output s absorbs partials 1 .. partials-1, in that order.
  void merge(int64_t partials, int64_t s) {
    Acc* __restrict a = acc + s * C;
    const int64_t w = width();
    for (int64_t p = 1; p < partials; ++p) {
      const Acc* __restrict b = acc + (p * S + s) * C;
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) slot_merge<Op, T>(a[j], b[j]);
      if constexpr (kCount) counts[s] += counts[p * S + s];
    }
  }
  // Writes output s from partial 0.
  void finalize(int64_t s, const T* values, MatrixView<T> out, MatrixView<int64_t>) const {
    const Acc* a = acc + s * C;
    const int64_t count = kCount ? counts[s] : 1;
    T* o = out.row(s);
    int64_t unused;
    for (int64_t j = 0; j < width(); ++j) slot_finalize<Op, T>(a[j], count, values, C, j, o[j], unused);
  }
  // Element (s, j) of partial p, the values read at (row, c) -> row * rs + c * cs.
  void finalize_element(int64_t p, int64_t s, int64_t j, const T* values, int64_t rs, int64_t cs, T& o,
                        int64_t& arg) const {
    slot_finalize<Op, T>(acc[(p * S + s) * C + j], kCount ? counts[p * S + s] : 1, values, rs, cs, j, o, arg);
  }
};

// Min and max state of 32-bit types: `partials` arrays of [S, C] packed words.
template <class T, ReduceOp Op, int W>
struct PackedExtremumState {
  static constexpr int64_t kStateBytes = sizeof(uint64_t);
  static constexpr double kPartialsShare = 0.08;  // see choose_partials
  uint64_t* words;
  int64_t S, C;

  PackedExtremumState(Context& ctx, int64_t partials, int64_t segments, int64_t cols) : S(segments), C(cols) {
    ScratchLayout layout;
    const std::size_t words_at = layout.add<uint64_t>(partials * S * C);
    words = ScratchLayout::at<uint64_t>(ctx.scratch(layout.bytes()), words_at);
  }
  int64_t width() const { return W > 0 ? W : C; }

  void clear(int64_t p, int64_t s_begin, int64_t s_end) {
    std::fill(words + (p * S + s_begin) * C, words + (p * S + s_end) * C, kPackedEmpty);
  }
  void prefetch(int64_t p, int64_t s) const {
    prefetch_bytes(words + (p * S + s) * C, width() * static_cast<int64_t>(sizeof(uint64_t)));
  }
  void fold(int64_t p, int64_t s, const T* __restrict x, int64_t r) {
    uint64_t* __restrict w = words + (p * S + s) * C;
    const int64_t width_ = width();
#pragma omp simd
    for (int64_t j = 0; j < width_; ++j) {
      const uint64_t word = extremum_word<Op>(x[j], r);
      w[j] = word > w[j] ? word : w[j];
    }
  }
  void merge(int64_t partials, int64_t s) {
    uint64_t* __restrict a = words + s * C;
    const int64_t width_ = width();
    for (int64_t p = 1; p < partials; ++p) {
      const uint64_t* __restrict b = words + (p * S + s) * C;
#pragma omp simd
      for (int64_t j = 0; j < width_; ++j) slot_merge<Op, T>(a[j], b[j]);
    }
  }
  void finalize(int64_t s, const T* values, MatrixView<T> out, MatrixView<int64_t> arg) const {
    T* o = out.row(s);
    int64_t* a = arg.present() ? arg.row(s) : nullptr;
    for (int64_t j = 0; j < width(); ++j) {
      int64_t row;
      slot_finalize<Op, T>(words[s * C + j], 1, values, C, j, o[j], row);
      if (a) a[j] = row;
    }
  }
  void finalize_element(int64_t p, int64_t s, int64_t j, const T* values, int64_t rs, int64_t cs, T& o,
                        int64_t& arg) const {
    slot_finalize<Op, T>(words[(p * S + s) * C + j], 1, values, rs, cs, j, o, arg);
  }
};

// Min and max state of the types without a packed fold here (64-bit keys: double,
// int64; below AVX-512 every type): `partials` arrays of [S, C] keys (MonotoneKey<T>:
// 32 bits, 64 for double and int64) and [S, C] 32-bit rows.
template <class T, ReduceOp Op, int W>
struct ExtremumState {
  using Key = MonotoneKey<T>;
  static constexpr uint32_t kNoRow = 0xFFFFFFFFu;  // above kPackedMaxRow: never a real row
  static constexpr int64_t kStateBytes = sizeof(Key) + 4;
  static constexpr double kPartialsShare = 0.08;  // see choose_partials
  Key* keys;
  uint32_t* rows;
  int64_t S, C;

  ExtremumState(Context& ctx, int64_t partials, int64_t segments, int64_t cols) : S(segments), C(cols) {
    ScratchLayout layout;
    const std::size_t keys_at = layout.add<Key>(partials * S * C);
    const std::size_t rows_at = layout.add<uint32_t>(partials * S * C);
    void* base = ctx.scratch(layout.bytes());
    keys = ScratchLayout::at<Key>(base, keys_at);
    rows = ScratchLayout::at<uint32_t>(base, rows_at);
  }
  int64_t width() const { return W > 0 ? W : C; }

  // Key 0 is the smallest key, and row kNoRow marks "nothing yet" (key 0 is a
  // real key for integers, so the row decides).
  void clear(int64_t p, int64_t s_begin, int64_t s_end) {
    std::fill(keys + (p * S + s_begin) * C, keys + (p * S + s_end) * C, Key{0});
    std::fill(rows + (p * S + s_begin) * C, rows + (p * S + s_end) * C, kNoRow);
  }
  void prefetch(int64_t p, int64_t s) const {
    prefetch_bytes(keys + (p * S + s) * C, width() * static_cast<int64_t>(sizeof(Key)));
    prefetch_bytes(rows + (p * S + s) * C, width() * 4);
  }

  void fold(int64_t p, int64_t s, const T* __restrict x, int64_t r) {
    Key* __restrict k = keys + (p * S + s) * C;
    uint32_t* __restrict rw = rows + (p * S + s) * C;
    const uint32_t row = static_cast<uint32_t>(r);
    const int64_t w = width();
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) {
      const Key key = extremum_key<Op>(x[j]);
      // Floats never have key 0 (it would be a NaN bit pattern, and NaNs get the
      // top key), so "greater" alone also fills an empty state; for integers key 0
      // is real and an empty state is recognised by its row.
      const bool take = kFloatingElement<T> ? key > k[j] : key > k[j] || (key == k[j] && rw[j] == kNoRow);
      k[j] = take ? key : k[j];
      rw[j] = take ? row : rw[j];
    }
  }
  void merge(int64_t partials, int64_t s) {
    for (int64_t p = 1; p < partials; ++p) {
      for (int64_t j = 0; j < width(); ++j) {
        const int64_t i = s * C + j;
        const int64_t other = p * S * C + i;
        // The better value, or an equal one from a lower row; an empty partial
        // (row kNoRow) never beats anything.
        if (rows[other] != kNoRow && extremum_pair_beats(keys[other], rows[other], keys[i], rows[i])) {
          keys[i] = keys[other];
          rows[i] = rows[other];
        }
      }
    }
  }
  void finalize(int64_t s, const T* values, MatrixView<T> out, MatrixView<int64_t> arg) const {
    T* o = out.row(s);
    int64_t* a = arg.present() ? arg.row(s) : nullptr;
    for (int64_t j = 0; j < width(); ++j) {
      const int64_t i = s * C + j;
      int64_t row;
      extremum_finalize<Op, T>(keys[i], rows[i] == kNoRow ? -1 : static_cast<int64_t>(rows[i]), values, C, j, o[j],
                               row);
      if (a) a[j] = row;
    }
  }
  void finalize_element(int64_t p, int64_t s, int64_t j, const T* values, int64_t rs, int64_t cs, T& o,
                        int64_t& arg) const {
    const int64_t i = (p * S + s) * C + j;
    extremum_finalize<Op, T>(keys[i], rows[i] == kNoRow ? -1 : static_cast<int64_t>(rows[i]), values, rs, cs, j, o,
                             arg);
  }
};

template <class State, class T, class I>
void run_partials(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
                  Context& ctx) {
  const int64_t M = values.rows, C = values.cols;
  const int max_threads = omp_get_max_threads();
  State state(ctx, max_threads, out.rows, C);
  const T* v = values.data;
  const I* idx = index.data;
#pragma omp parallel num_threads(max_threads)
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    state.clear(t, 0, out.rows);
    const int64_t r_end = M * (t + 1) / threads;
    for (int64_t r = M * t / threads; r < r_end; ++r) {
      if (r + kPrefetchAhead < r_end) state.prefetch(t, static_cast<int64_t>(idx[r + kPrefetchAhead]));
      state.fold(t, static_cast<int64_t>(idx[r]), v + r * C, r);
    }
#pragma omp barrier
    // Each output is merged by one thread, partials in thread order (fixed for a
    // given thread count), then written out.
#pragma omp for schedule(static)
    for (int64_t s = 0; s < out.rows; ++s) {
      state.merge(threads, s);
      state.finalize(s, v, out, arg);
    }
  }
}

template <class State, class T, class I>
void run_owner(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
               Context& ctx) {
  const int64_t M = values.rows, C = values.cols, S = out.rows;
  State state(ctx, 1, S, C);
  const T* v = values.data;
  const I* idx = index.data;
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    const int64_t lo = S * t / threads;
    const int64_t span = S * (t + 1) / threads - lo;
    state.clear(0, lo, lo + span);
    int32_t list[kOwnerChunk];
    for (int64_t c0 = 0; c0 < M; c0 += kOwnerChunk) {
      const int64_t c1 = std::min(M, c0 + kOwnerChunk);
      int64_t n = 0;
      for (int64_t r = c0; r < c1; ++r) {  // branch-free compaction of the rows this thread owns
        list[n] = static_cast<int32_t>(r - c0);
        n += static_cast<uint64_t>(static_cast<int64_t>(idx[r]) - lo) < static_cast<uint64_t>(span);
      }
      for (int64_t q = 0; q < n; ++q) {
        if (q + kPrefetchAhead < n) {
          const int64_t ahead = c0 + list[q + kPrefetchAhead];
          __builtin_prefetch(v + ahead * C);
          state.prefetch(0, static_cast<int64_t>(idx[ahead]));
        }
        const int64_t r = c0 + list[q];
        state.fold(0, static_cast<int64_t>(idx[r]), v + r * C, r);
      }
    }
    for (int64_t s = lo; s < lo + span; ++s) state.finalize(s, v, out, arg);
  }
}

// Grouped: the rows sorted by output (common/row_groups_cpu.hpp), then every output
// folded whole by one thread from its rows in increasing order, in a state of one
// row that stays in L1, the rows gathered with prefetch.
template <class State, class T, class I>
void run_grouped(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
                 Context& ctx) {
  using namespace row_groups_detail;
  const int64_t C = values.cols;
  const int max_threads = omp_get_max_threads();
  const RowGroups groups = group_rows(index.data, values.rows, out.rows);
  State state(ctx, max_threads, 1, C);
  const T* v = values.data;
  const uint32_t* order = groups.order.data();
  const int64_t row_bytes = C * static_cast<int64_t>(sizeof(T));
#pragma omp parallel num_threads(max_threads)
  {
    const int64_t t = omp_get_thread_num();
    for_each_group(groups, [&](int64_t s, int64_t begin, int64_t end, int64_t prefetch_end) {
      state.clear(t, 0, 1);
      for (int64_t j = begin; j < end; ++j) {
        if (j + kPrefetchAhead < prefetch_end) prefetch_row(v, order[j + kPrefetchAhead], row_bytes);
        const int64_t r = order[j];
        state.fold(t, 0, v + r * C, r);
      }
      T* o = out.row(s);
      int64_t* a = arg.present() ? arg.row(s) : nullptr;
      for (int64_t j = 0; j < C; ++j) {
        int64_t row;
        state.finalize_element(t, 0, j, v, C, 1, o[j], row);
        if (a) a[j] = row;
      }
    });
  }
}

// Partials while their state, threads x S x C elements, stays a small share of
// the input (counting a fixed per-row cost of owner-computes: the index scan and
// the compaction, ~64 bytes' worth). The shares are the crossovers measured on
// the 2-core machine for C = 1, 16, 64: ~0.15 for sum/mean and ~0.08 for
// min/max, whose state is twice as large and rewritten more. One thread: always
// partials (one state, no merge, no scan overhead).
template <class State, class T>
bool choose_partials(int64_t threads, int64_t M, int64_t C, int64_t S) {
  const double state = static_cast<double>(threads) * static_cast<double>(S) * static_cast<double>(C) *
                       static_cast<double>(State::kStateBytes);
  const double input = static_cast<double>(M) * static_cast<double>(static_cast<int64_t>(sizeof(T)) * C + 64);
  return threads == 1 || state <= State::kPartialsShare * input;
}

// Grouped once the owner state outgrows the last-level cache (row_groups_cpu.hpp).
// Measured on the 2-core AMD EPYC, M = 10^6, max with arg: at C = 64, S = 10^5 (state
// 51 MB) grouped took 30-42 ms against owner-computes' 58-70 (float32 and bfloat16);
// at C = 16, S = 10^5 (12.8 MB) and C = 64, S = 10^4 (5 MB) it was 1.2-1.5x slower.
// Sum at C = 64, S = 10^5 (25.6 MB) measured the same both ways.
template <class State>
bool choose_grouped(int64_t M, int64_t C, int64_t S) {
  const double state = static_cast<double>(S) * static_cast<double>(C) * static_cast<double>(State::kStateBytes);
  return row_groups_detail::grouping_pays(M, state);
}

template <class State, class T, class I>
void run(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
         Context& ctx) {
  if (choose_partials<State, T>(omp_get_max_threads(), values.rows, values.cols, out.rows)) {
    run_partials<State>(values, index, out, arg, ctx);
  } else if (choose_grouped<State>(values.rows, values.cols, out.rows)) {
    run_grouped<State>(values, index, out, arg, ctx);
  } else {
    run_owner<State>(values, index, out, arg, ctx);
  }
}

// This core's L2 cache in bytes (sysconf; 1 MiB when the system does not say).
inline int64_t l2_cache_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20;
  }();
  return bytes;
}

// The packed fold does twice the vector work per element of the key + row arrays
// and wins only when a thread's state misses the L2 cache. Measured, C = 16: on an
// AMD EPYC (1 MiB L2) 1.3-1.5x faster at S = 10^4 and 5 x 10^4 (states of 1.3 and
// 6.4 MB), 1.1-1.3x slower at S = 100; on an Intel Xeon (2 MiB L2) 2.1x slower at
// S = 10^4 (the state fits its L2) and even at 5 x 10^4. Mixed at C = 64, where a
// row already fills four lines of state per array.
inline bool packed_pays(int64_t segments, int64_t cols) {
  return cols <= 32 && segments * cols * static_cast<int64_t>(sizeof(uint64_t)) > l2_cache_bytes();
}

template <class State>
struct StateTag {
  using type = State;
};

// Calls f(StateTag<State>{}) with the state an op keeps per output element.
template <class T, ReduceOp Op, int W, class F>
void visit_state(int64_t segments, int64_t cols, F&& f) {
  if constexpr (kPackedExtremum<Op> && sizeof(MonotoneKey<T>) == 4 && kVectorU64Max) {
    if (packed_pays(segments, cols)) {
      f(StateTag<PackedExtremumState<T, Op, W>>{});
    } else {
      f(StateTag<ExtremumState<T, Op, W>>{});
    }
  } else if constexpr (kPackedExtremum<Op>) {
    f(StateTag<ExtremumState<T, Op, W>>{});
  } else {
    f(StateTag<AccState<T, Op, W>>{});
  }
}

template <class T, ReduceOp Op, int W, class I>
void run_op(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
            Context& ctx) {
  visit_state<T, Op, W>(out.rows, values.cols, [&](auto tag) {
    run<typename decltype(tag)::type>(values, index, out, arg, ctx);
  });
}

template <class T, ReduceOp Op, class I>
void run_width(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
               Context& ctx) {
  visit_row_width<T, Op>(values.cols,
                     [&](auto w) { run_op<T, Op, decltype(w)::value>(values, index, out, arg, ctx); });
}

// --- values given transposed: values_t [C, M], out_t / arg_t [C, S] -------------------------------
//
// The columns are split among the threads (thread t folds columns [C t / n, C (t+1) / n)
// of every row into its own partial, so nothing is merged) and each thread transposes
// its columns of a tile of rows at a time into a buffer that stays in L2, then folds
// the buffer's rows as the row-major driver does. The whole tensor is read once, where
// a transposed copy first would read it twice and write it once. A tile reads a page
// (4 KiB) or more of each column at a time: with 128 rows per tile (512 bytes per
// column, 32 columns 4 MB apart) it ran 3.4x slower at C = 64.
constexpr int64_t kTileBytes = 128 << 10;
constexpr int64_t kTransposeBlock = 16;

template <class T>
int64_t tile_rows(int64_t width) {
  return std::clamp<int64_t>(kTileBytes / (width * static_cast<int64_t>(sizeof(T))), 1024, 8192);
}

template <class State, class T, class I>
void run_transposed(MatrixView<const T> values_t, VectorView<const I> index, MatrixView<T> out_t,
                    MatrixView<int64_t> arg_t, int64_t threads, int64_t width, Context& ctx) {
  const int64_t C = values_t.rows, M = values_t.cols, S = out_t.cols;
  State state(ctx, threads, S, width);
  const I* idx = index.data;
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    const int64_t t = omp_get_thread_num();
    const int64_t lo = C * t / threads, w = C * (t + 1) / threads - lo;
    const T* vt = values_t.data + lo * M;
    // Columns w .. width-1 of the tile (a thread with fewer columns) stay 0: folded, never written.
    const int64_t rows = tile_rows<T>(width);
    std::vector<T> tile(static_cast<std::size_t>(rows * width), T(0));
    T* buf = tile.data();
    state.clear(t, 0, S);
    for (int64_t r0 = 0; r0 < M; r0 += rows) {
      const int64_t n = std::min(rows, M - r0);
      // Blocks of kTransposeBlock rows: the block's lines of the tile are completed
      // in L1 (the tile's rows are `width` elements apart).
      for (int64_t q0 = 0; q0 < n; q0 += kTransposeBlock) {
        transpose_tiles::EW_CPU_ISA_NS::transpose_tile(vt + r0 + q0, M, w, std::min(kTransposeBlock, n - q0), buf + q0 * width, width);
      }
      for (int64_t q = 0; q < n; ++q) {
        const int64_t r = r0 + q;
        if (r + kPrefetchAhead < M) state.prefetch(t, static_cast<int64_t>(idx[r + kPrefetchAhead]));
        state.fold(t, static_cast<int64_t>(idx[r]), buf + q * width, r);
      }
    }
    // Outputs in blocks of outputs, each block written row by row of out_t.
    constexpr int64_t kBlock = 64;
    for (int64_t s0 = 0; s0 < S; s0 += kBlock) {
      const int64_t s1 = std::min(S, s0 + kBlock);
      for (int64_t j = 0; j < w; ++j) {
        T* o = out_t.row(lo + j);
        int64_t* a = arg_t.present() ? arg_t.row(lo + j) : nullptr;
        for (int64_t s = s0; s < s1; ++s) {
          int64_t row;
          state.finalize_element(t, s, j, vt, 1, M, o[s], row);
          if (a) a[s] = row;
        }
      }
    }
  }
}

template <class T, ReduceOp Op, class I>
void run_transposed_width(MatrixView<const T> values_t, VectorView<const I> index, MatrixView<T> out_t,
                          MatrixView<int64_t> arg_t, Context& ctx) {
  const int64_t threads = transposed_threads(values_t.rows);
  const int64_t width = transposed_columns_per_thread(values_t.rows);
  visit_row_width<T, Op>(width, [&](auto w) {
    visit_state<T, Op, decltype(w)::value>(out_t.cols, width, [&](auto tag) {
      run_transposed<typename decltype(tag)::type>(values_t, index, out_t, arg_t, threads, width, ctx);
    });
  });
}

}  // namespace

template <class T, class I>
void scatter_reduce_cpu(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                        MatrixView<int64_t> arg, Context& ctx) {
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if constexpr (kDefinedFor<Op, T>) run_width<T, Op>(values, index, out, arg, ctx);  // scatter_reduce.cpp rejected the rest
  });
}

template <class T, class I>
void scatter_reduce_transposed_cpu(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                   MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if constexpr (kDefinedFor<Op, T>) run_transposed_width<T, Op>(values_t, index, out_t, arg_t, ctx);
  });
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                            \
  template void scatter_reduce_cpu<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                         MatrixView<int64_t>, Context&);                                    \
  template void scatter_reduce_transposed_cpu<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp,     \
                                                    MatrixView<T>, MatrixView<int64_t>, Context&);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
// The baseline copy: every element type; the AVX2 / AVX-512 copies: float, Half and
// BFloat16 (kIsaDispatchedScatterElement).
#if EW_CPU_ISA_LEVEL == 0
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#else
EW_INSTANTIATE(float)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#endif
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::scatter_reduce_detail
