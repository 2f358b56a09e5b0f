// segment_reduce CPU driver (OpenMP).
//
// The gather-reduce engine over a contiguous source: the shared scheduler
// (gather_reduce/gather_reduce_cpu.hpp) balances segments by rows and splits hubs
// into fixed pieces merged in order; this file supplies the fold. Each segment is
// reduced by one thread, sequentially in row order, so outputs need no atomics and
// the result is bitwise identical at any thread count. The fold interleaves lanes
// because a contiguous source is bandwidth-bound (spmm's gathers are latency-bound
// and prefetch instead).
#include "segment_reduce/segment_reduce_backends.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "edgewise/kernels/common/reducer.hpp"
#include "cpu_isa/row_width.hpp"
#include "gather_reduce/gather_reduce_cpu.hpp"

namespace edgewise::segment_reduce_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {

using gather_reduce_detail::piece_rows;

constexpr int64_t kCpuPieceElements = int64_t{1} << 20;  // ~4 MB of float rows per piece
// Below this many elements one thread does the work (a parallel region costs more).
constexpr int64_t kParallelMinElements = int64_t{1} << 15;
constexpr int64_t kTileCols = 64;         // column tile for widths not specialised

// Rows fold into kLanes interleaved accumulators: narrow rows otherwise wait on
// the add (or compare) latency of one accumulator per column. Lanes merge in a
// fixed order. Min/max get twice the lanes: their chain is longer, and at
// C = 16 two lanes left a thread at ~0.65 of the copy floor, four reach it.
template <int W, bool kLongChain>
constexpr int lanes_for_width() {
  constexpr int kFloats = kLongChain ? 64 : 32;
  return (W > 0 && W < kFloats) ? std::min(32, kFloats / W) : 1;
}

template <class T, ReduceOp Op, bool kArg, int W>
struct SegmentCpu {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;
  static constexpr int kLanes = lanes_for_width<W, R::kLongChain>();
  // Float min/max fold with accumulate_skipping_nan and note NaN per column; a
  // column that saw one is resolved by a rescan (rare), keeping "first NaN wins".
  static constexpr bool kTrackNan = R::kNanSkippingFold;
  // Float min/max with arg: the value first (that fold), then the arg by a scan for the
  // first row holding it (locate_args; the rows are still in cache). Measured 4x
  // faster than folding value and row together (a compare-select of both per element)
  // at C = 16: 1.2 + ~1 ms against 5.0 ms for 1M rows into 10K segments.
  static constexpr bool kLocateArg = kArg && kTrackNan;
  static constexpr int kWidth = W > 0 ? W : static_cast<int>(kTileCols);

  // Accumulator state for one column tile, kLanes interleaved copies.
  struct State {
    Acc acc[kLanes][kWidth];
    int64_t arg[kLanes][kWidth];
    uint32_t nan[kLanes][kWidth];  // as wide as a float lane, so the fold vectorises
  };

  // One row into lane `l` (r: the row's index, for arg).
  static void fold_row(const T* __restrict row, int64_t w, int64_t r, int l, State& s) {
    if constexpr (kArg && !kLocateArg) {
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) R::accumulate(s.acc[l][j], s.arg[l][j], row[j], r);
    } else if constexpr (kTrackNan) {
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) {
        R::accumulate_skipping_nan(s.acc[l][j], row[j]);
        s.nan[l][j] |= static_cast<uint32_t>(is_nan(row[j]));
      }
    } else {
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) R::accumulate(s.acc[l][j], row[j]);
    }
  }

  // Folds rows [begin, end) of columns [c0, c0 + width) into lane 0 of `s`
  // (after merging the lanes); width == W when W > 0.
  static void fold(const T* __restrict values, int64_t cols, int64_t c0, int64_t width, int64_t begin,
                   int64_t end, State& s) {
    const int64_t w = W > 0 ? W : width;
    for (int l = 0; l < kLanes; ++l) {
      for (int64_t j = 0; j < w; ++j) {
        s.acc[l][j] = R::identity();
        if constexpr (kArg) s.arg[l][j] = -1;
        if constexpr (kTrackNan) s.nan[l][j] = 0;
      }
    }
    int64_t r = begin;
    for (; r + kLanes <= end; r += kLanes) {
      for (int l = 0; l < kLanes; ++l) fold_row(values + (r + l) * cols + c0, w, r + l, l, s);
    }
    for (int l = 0; r < end; ++r, ++l) {  // the tail: fewer than kLanes rows (none when kLanes == 1)
      fold_row(values + r * cols + c0, w, r, l, s);
    }
    if constexpr (kTrackNan) {
      merge_lanes_tracking_nan(values, cols, c0, w, begin, s);
      if constexpr (kLocateArg) locate_args(values, cols, c0, w, begin, end, s);
    } else {
      for (int l = 1; l < kLanes; ++l) {
        for (int64_t j = 0; j < w; ++j) {
          if constexpr (kArg) {
            combine(s.acc[0][j], s.arg[0][j], s.acc[l][j], s.arg[l][j]);
          } else {
            int64_t no_arg = -1;
            combine(s.acc[0][j], no_arg, s.acc[l][j], -1);
          }
        }
      }
    }
  }

  // Lanes hold NaN-free extrema here, so they merge with one vector max/min; a
  // column that saw a NaN takes the first NaN of its rows (what propagation gives).
  static void merge_lanes_tracking_nan(const T* __restrict values, int64_t cols, int64_t c0, int64_t w,
                                       int64_t begin, State& s) {
    for (int l = 1; l < kLanes; ++l) {
#pragma omp simd
      for (int64_t j = 0; j < w; ++j) {
        R::accumulate_skipping_nan(s.acc[0][j], s.acc[l][j]);
        s.nan[0][j] |= s.nan[l][j];
      }
    }
    uint32_t any_nan = 0;
#pragma omp simd reduction(| : any_nan)
    for (int64_t j = 0; j < w; ++j) any_nan |= s.nan[0][j];
    if (!any_nan) return;
    for (int64_t j = 0; j < w; ++j) {
      if (!s.nan[0][j]) continue;
      int64_t first = begin;
      while (!is_nan(values[first * cols + c0 + j])) ++first;
      s.acc[0][j] = values[first * cols + c0 + j];
    }
  }

  // arg = the first row of [begin, end) holding the folded value (NaN: the first NaN),
  // so ties go to the lower row; the value is then read back from that row, so -0 and
  // +0 (equal, but not the same bits) come out as the winning row holds them.
  static void locate_args(const T* __restrict values, int64_t cols, int64_t c0, int64_t w, int64_t begin,
                          int64_t end, State& s) {
    // Offsets from begin in 32 bits, as wide as a float lane, so the scan vectorises (a
    // range is at most one piece, far below 2^31 rows); kNotFound is above any offset.
    constexpr int32_t kNotFound = std::numeric_limits<int32_t>::max();
    alignas(64) int32_t found[kWidth];
    for (int64_t j = 0; j < w; ++j) found[j] = kNotFound;
    constexpr int64_t kCheckEvery = 8;  // rows between checks that every column is found
    for (int64_t r0 = begin; r0 < end; r0 += kCheckEvery) {
      const int64_t r1 = std::min(end, r0 + kCheckEvery);
      for (int64_t r = r0; r < r1; ++r) {
        const T* __restrict row = values + r * cols + c0;
        const auto offset = static_cast<int32_t>(r - begin);
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) {
          const Acc v = static_cast<Acc>(row[j]);
          const bool equal = (v == s.acc[0][j]) | (is_nan(v) & is_nan(s.acc[0][j]));  // no branches: it vectorises
          found[j] = equal ? std::min(found[j], offset) : found[j];
        }
      }
      // A plain loop: GCC 12 vectorises an int32 max reduction over a short array with
      // MMX registers and no emms, which leaves the x87 unit broken (long double NaN).
      bool missing = false;
      for (int64_t j = 0; j < w; ++j) missing |= found[j] == kNotFound;
      if (!missing) break;
    }
    for (int64_t j = 0; j < w; ++j) {
      s.arg[0][j] = found[j] == kNotFound ? -1 : begin + found[j];
      if (s.arg[0][j] >= 0) s.acc[0][j] = static_cast<Acc>(values[s.arg[0][j] * cols + c0 + j]);
    }
  }

  static void combine(Acc& acc, int64_t& arg, Acc acc_b, int64_t arg_b) {
    R::template combine<kArg>(acc, arg, acc_b, arg_b);
  }

  static void write(const State& s, int64_t width, int64_t count, T* __restrict out,
                    int64_t* __restrict arg) {
    const int64_t w = W > 0 ? W : width;
    for (int64_t j = 0; j < w; ++j) out[j] = R::finalize(s.acc[0][j], count);
    if constexpr (kArg) {
      for (int64_t j = 0; j < w; ++j) arg[j] = count > 0 ? s.arg[0][j] : -1;
    }
  }

  static void reduce_segment(const T* values, int64_t cols, int64_t begin, int64_t end, T* out_row,
                             int64_t* arg_row) {
    State s;
    for (int64_t c0 = 0; c0 < cols; c0 += kWidth) {
      const int64_t width = std::min<int64_t>(kWidth, cols - c0);
      fold(values, cols, c0, width, begin, end, s);
      write(s, width, end - begin, out_row + c0, kArg ? arg_row + c0 : nullptr);
    }
  }

  // The fold the shared scheduler (gather_reduce_cpu.hpp) runs.
  struct Fold {
    const T* values;
    int64_t cols;
    T* out;
    int64_t* arg;
    struct Local {
      explicit Local(const Fold&) {}
    };
    void row(Local&, int64_t s, int64_t begin, int64_t end, int64_t) const {
      reduce_segment(values, cols, begin, end, out + s * cols, kArg ? arg + s * cols : nullptr);
    }
    void piece(Local&, int64_t begin, int64_t end, Acc* acc, int64_t* piece_arg) const {
      State st;
      for (int64_t c0 = 0; c0 < cols; c0 += kWidth) {
        const int64_t width = std::min<int64_t>(kWidth, cols - c0);
        fold(values, cols, c0, width, begin, end, st);
        for (int64_t j = 0; j < width; ++j) {
          acc[c0 + j] = st.acc[0][j];
          if constexpr (kArg) piece_arg[c0 + j] = st.arg[0][j];
        }
      }
    }
  };

  static void run(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
                  MatrixView<int64_t> arg, Context& ctx) {
    const int64_t S = out.rows;
    const int64_t C = values.cols;
    const bool parallel = (values.rows + S) * C >= kParallelMinElements;
    gather_reduce_detail::run_balanced<R, kArg>(offsets.data, S, C, piece_rows(C, kCpuPieceElements), parallel,
                                                out.data, arg.data, Fold{values.data, C, out.data, arg.data}, ctx);
  }
};

template <class T, ReduceOp Op, bool kArg>
void run_width(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
               MatrixView<int64_t> arg, Context& ctx) {
  if constexpr (kHalfType<T> && (Op == ReduceOp::Min || Op == ReduceOp::Max)) {
    // 16-bit min / max (torch_scatter's bfloat16 callers) at the common feature widths:
    // a constant width gives the fold its interleaved float lanes, where the generic
    // loop keeps one (bfloat16 max with arg at C = 64 ran at 0.4 of float's speed).
    switch (values.cols) {
      case 16: return SegmentCpu<T, Op, kArg, 16>::run(values, offsets, out, arg, ctx);
      case 32: return SegmentCpu<T, Op, kArg, 32>::run(values, offsets, out, arg, ctx);
      case 64: return SegmentCpu<T, Op, kArg, 64>::run(values, offsets, out, arg, ctx);
      default: break;
    }
  }
  visit_row_width<T, Op>(values.cols, [&](auto w) {
    SegmentCpu<T, Op, kArg, decltype(w)::value>::run(values, offsets, out, arg, ctx);
  });
}

}  // namespace

template <class T>
void segment_reduce_cpu(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                        MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if constexpr (kDefinedFor<Op, T>) {  // segment_reduce.cpp rejected the rest
      if constexpr (Reducer<Op, T>::kHasArg) {
        if (arg.present()) return run_width<T, Op, true>(values, offsets, out, arg, ctx);
      }
      run_width<T, Op, false>(values, offsets, out, arg, ctx);
    }
  });
}

#define EW_INSTANTIATE(T)                                                                                \
  template void segment_reduce_cpu<T>(MatrixView<const T>, VectorView<const int64_t>, ReduceOp, MatrixView<T>, \
                                      MatrixView<int64_t>, Context&);
// The baseline copy: every element type; the AVX2 / AVX-512 copies: float, Half and
// BFloat16 (kIsaDispatchedScatterElement).
#if EW_CPU_ISA_LEVEL == 0
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#else
EW_INSTANTIATE(float)
EW_INSTANTIATE(Half)
EW_INSTANTIATE(BFloat16)
#endif
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::segment_reduce_detail
