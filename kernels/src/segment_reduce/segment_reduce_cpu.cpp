// segment_reduce CPU driver (OpenMP).
//
// Each segment is reduced by one thread, sequentially in row order, so outputs need
// no atomics and the summation order never depends on the thread count. Threads
// take contiguous segment ranges of equal cost (rows + per-segment overhead) found
// by binary search on the offsets, which balances skewed degrees. Segments longer
// than a fixed piece size (in elements) are cut into pieces reduced in parallel
// and merged in piece order: a hub cannot serialise one thread, and because the
// piece size is fixed the result stays bitwise identical at any thread count.
#include "segment_reduce/segment_reduce_backends.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "edgewise/kernels/common/reducer.hpp"
#include "segment_reduce/segment_reduce_core.hpp"

namespace edgewise::segment_reduce_detail {

namespace {

constexpr int64_t kCpuPieceElements = int64_t{1} << 20;  // ~4 MB of float rows per piece
constexpr int64_t kSegmentCostRows = 2;   // per-segment overhead, in rows, for balancing
constexpr int64_t kTileCols = 64;         // column tile for widths not specialised

// Rows fold into kLanes interleaved accumulators: narrow rows otherwise wait on
// the add (or compare) latency of one accumulator per column. Lanes merge in a
// fixed order. Min/max get twice the lanes: their chain is longer, and at
// C = 16 two lanes left a thread at ~0.65 of the copy floor, four reach it.
template <int W, bool kExtremum>
constexpr int lanes_for_width() {
  constexpr int kFloats = kExtremum ? 64 : 32;
  return (W > 0 && W < kFloats) ? std::min(32, kFloats / W) : 1;
}

template <class T, ReduceOp Op, bool kArg, int W>
struct SegmentCpu {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;
  static constexpr int kLanes = lanes_for_width<W, R::kExtremum>();
  // Min/max without arg fold with accumulate_skipping_nan and note NaN per column;
  // a column that saw one is resolved by a rescan (rare), keeping "first NaN wins".
  static constexpr bool kTrackNan = R::kExtremum && !kArg && std::is_floating_point_v<T>;
  static constexpr int kWidth = W > 0 ? W : static_cast<int>(kTileCols);

  // Accumulator state for one column tile, kLanes interleaved copies.
  struct State {
    Acc acc[kLanes][kWidth];
    int64_t arg[kLanes][kWidth];
    uint32_t nan[kLanes][kWidth];  // as wide as a float lane, so the fold vectorises
  };

  // One row into lane `l` (r: the row's index, for arg).
  static void fold_row(const T* __restrict row, int64_t w, int64_t r, int l, State& s) {
    if constexpr (kArg) {
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

  static void run(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
                  MatrixView<int64_t> arg, Context& ctx) {
    const int64_t S = out.rows;
    const int64_t M = values.rows;
    const int64_t C = values.cols;
    const int64_t* off = offsets.data;
    const int64_t rows_per_piece = piece_rows(C, kCpuPieceElements);

    // Phase 1: segments up to one piece long, contiguous equal-cost ranges per thread.
#pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads();
      const int64_t t = omp_get_thread_num();
      const int64_t total_cost = M + S * kSegmentCostRows;
      auto first_segment_at = [&](int64_t cost) {
        // First s with off[s] + s * kSegmentCostRows >= cost (monotone in s).
        int64_t lo = 0, hi = S;
        while (lo < hi) {
          int64_t mid = lo + (hi - lo) / 2;
          if (off[mid] + mid * kSegmentCostRows < cost) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        return lo;
      };
      const int64_t s_begin = first_segment_at(total_cost / threads * t + std::min(t, total_cost % threads));
      const int64_t s_end = t + 1 == threads
                                ? S
                                : first_segment_at(total_cost / threads * (t + 1) +
                                                   std::min(t + 1, total_cost % threads));
      for (int64_t s = s_begin; s < s_end; ++s) {
        if (off[s + 1] - off[s] > rows_per_piece) continue;
        reduce_segment(values.data, C, off[s], off[s + 1], out.row(s), kArg ? arg.row(s) : nullptr);
      }
    }

    // Phase 2: long segments, cut into fixed pieces.
    std::vector<int64_t> long_segments;
    std::vector<int64_t> piece_start{0};
    for (int64_t s = 0; s < S; ++s) {
      int64_t pieces = piece_count(off[s + 1] - off[s], rows_per_piece);
      if (pieces > 0) {
        long_segments.push_back(s);
        piece_start.push_back(piece_start.back() + pieces);
      }
    }
    if (long_segments.empty()) return;
    const int64_t long_count = static_cast<int64_t>(long_segments.size());
    const int64_t total_pieces = piece_start.back();

    ScratchLayout layout;
    const std::size_t acc_at = layout.add<Acc>(total_pieces * C);
    const std::size_t arg_at = layout.add<int64_t>(total_pieces * C);
    void* base = ctx.scratch(layout.bytes());
    Acc* piece_acc = ScratchLayout::at<Acc>(base, acc_at);
    int64_t* piece_arg = ScratchLayout::at<int64_t>(base, arg_at);

#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t p = 0; p < total_pieces; ++p) {
      int64_t position = 0, rank = 0;
      locate_piece(piece_start.data(), long_count, p, position, rank);
      const int64_t s = long_segments[position];
      const int64_t begin = off[s] + rank * rows_per_piece;
      const int64_t end = std::min(off[s + 1], begin + rows_per_piece);
      State st;
      for (int64_t c0 = 0; c0 < C; c0 += kWidth) {
        const int64_t width = std::min<int64_t>(kWidth, C - c0);
        fold(values.data, C, c0, width, begin, end, st);
        for (int64_t j = 0; j < width; ++j) {
          piece_acc[p * C + c0 + j] = st.acc[0][j];
          if constexpr (kArg) {
            piece_arg[p * C + c0 + j] = st.arg[0][j];
          } else {
            piece_arg[p * C + c0 + j] = -1;
          }
        }
      }
    }

#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < long_count; ++i) {
      const int64_t s = long_segments[i];
      const int64_t count = off[s + 1] - off[s];
      for (int64_t c = 0; c < C; ++c) {
        Acc acc = piece_acc[piece_start[i] * C + c];
        int64_t a = piece_arg[piece_start[i] * C + c];
        for (int64_t p = piece_start[i] + 1; p < piece_start[i + 1]; ++p) {
          combine(acc, a, piece_acc[p * C + c], piece_arg[p * C + c]);
        }
        out(s, c) = R::finalize(acc, count);
        if constexpr (kArg) arg(s, c) = a;
      }
    }
  }
};

template <class T, ReduceOp Op, bool kArg>
void run_width(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
               MatrixView<int64_t> arg, Context& ctx) {
  switch (values.cols) {
    case 1: return SegmentCpu<T, Op, kArg, 1>::run(values, offsets, out, arg, ctx);
    case 2: return SegmentCpu<T, Op, kArg, 2>::run(values, offsets, out, arg, ctx);
    case 4: return SegmentCpu<T, Op, kArg, 4>::run(values, offsets, out, arg, ctx);
    case 8: return SegmentCpu<T, Op, kArg, 8>::run(values, offsets, out, arg, ctx);
    case 16: return SegmentCpu<T, Op, kArg, 16>::run(values, offsets, out, arg, ctx);
    case 32: return SegmentCpu<T, Op, kArg, 32>::run(values, offsets, out, arg, ctx);
    case 64: return SegmentCpu<T, Op, kArg, 64>::run(values, offsets, out, arg, ctx);
    case 128: return SegmentCpu<T, Op, kArg, 128>::run(values, offsets, out, arg, ctx);
    default: return SegmentCpu<T, Op, kArg, 0>::run(values, offsets, out, arg, ctx);
  }
}

}  // namespace

template <class T>
void segment_reduce_cpu(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                        MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  const bool with_arg = arg.present();
  switch (op) {
    case ReduceOp::Sum: return run_width<T, ReduceOp::Sum, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Mean: return run_width<T, ReduceOp::Mean, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Min:
      return with_arg ? run_width<T, ReduceOp::Min, true>(values, offsets, out, arg, ctx)
                      : run_width<T, ReduceOp::Min, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Max:
      return with_arg ? run_width<T, ReduceOp::Max, true>(values, offsets, out, arg, ctx)
                      : run_width<T, ReduceOp::Max, false>(values, offsets, out, arg, ctx);
  }
}

template void segment_reduce_cpu<float>(MatrixView<const float>, VectorView<const int64_t>, ReduceOp,
                                        MatrixView<float>, MatrixView<int64_t>, Context&);
template void segment_reduce_cpu<double>(MatrixView<const double>, VectorView<const int64_t>, ReduceOp,
                                         MatrixView<double>, MatrixView<int64_t>, Context&);
template void segment_reduce_cpu<int32_t>(MatrixView<const int32_t>, VectorView<const int64_t>, ReduceOp,
                                          MatrixView<int32_t>, MatrixView<int64_t>, Context&);
template void segment_reduce_cpu<uint32_t>(MatrixView<const uint32_t>, VectorView<const int64_t>,
                                           ReduceOp, MatrixView<uint32_t>, MatrixView<int64_t>, Context&);

}  // namespace edgewise::segment_reduce_detail
