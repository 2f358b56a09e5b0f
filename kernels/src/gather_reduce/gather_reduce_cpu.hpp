// The CPU gather-reduce engine's scheduler, shared by segment_reduce (rows of a
// contiguous source) and spmm (gathered rows): how destination rows are balanced
// across threads and how hubs are split and merged. The caller supplies the fold
// of one row / one piece; everything about work distribution lives here, once.
//
// Destination rows are cut into contiguous chunks of equal cost (edges + a
// per-row overhead, found by binary search on the offsets), so skewed degrees
// balance by edges, not rows. Rows longer than a fixed piece are cut into pieces
// reduced in parallel (chunks and pieces share one dynamic pool, so no thread
// waits while work is left) and each hub's partials merge in piece order with
// the op's merge. Each output row has one writer: no atomics, and since the piece
// size is fixed the result is bitwise identical at any thread count.
// Host compiler only (OpenMP); included by dispatched CPU files only.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "cpu_isa/dispatch.hpp"
#include "gather_reduce/gather_reduce_core.hpp"

namespace edgewise::gather_reduce_detail {
// Each ISA level's copy in its own namespace: the per-level objects never share (and
// the linker never swaps) a copy of these functions.
inline namespace EW_CPU_ISA_NS {

inline constexpr int64_t kRowCostEdges = 2;                 // per-row overhead, in edges, for balancing
inline constexpr int64_t kChunksPerThread = 8;              // row chunks per thread in the dynamic pool
inline constexpr int64_t kMinChunkCost = int64_t{1} << 14;  // edges (+ row overhead) per chunk, at least

// Rows longer than one piece, in row order, with prefix sums of their edges and pieces.
struct Hubs {
  std::vector<int64_t> rows;
  std::vector<int64_t> edges_before{0};  // [count + 1]
  std::vector<int64_t> piece_start{0};   // [count + 1]
  int64_t count() const { return static_cast<int64_t>(rows.size()); }
};

inline Hubs find_hubs(const int64_t* off, int64_t rows, int64_t piece_edges) {
  Hubs hubs;
  for (int64_t s = 0; s < rows; ++s) {
    const int64_t length = off[s + 1] - off[s];
    if (length > piece_edges) {
      hubs.rows.push_back(s);
      hubs.edges_before.push_back(hubs.edges_before.back() + length);
      hubs.piece_start.push_back(hubs.piece_start.back() + piece_count(length, piece_edges));
    }
  }
  return hubs;
}

// Rows [first, last) of chunk k of `chunks`: contiguous, of about equal cost (edges of
// rows that are not hubs + kRowCostEdges per row; hub edges go to the pieces).
inline std::pair<int64_t, int64_t> chunk_rows(const int64_t* off, int64_t rows, const Hubs& hubs, int64_t k,
                                              int64_t chunks) {
  auto cost = [&](int64_t s) {  // nondecreasing in s
    const int64_t hubs_before = lower_bound_index(hubs.rows.data(), 0, hubs.count(), s);
    return off[s] - hubs.edges_before[hubs_before] + s * kRowCostEdges;
  };
  const int64_t total = cost(rows);
  auto first_row_at = [&](int64_t target) {
    int64_t lo = 0, hi = rows;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (cost(mid) < target) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  };
  const int64_t first = k == 0 ? 0 : first_row_at(total / chunks * k + std::min(k, total % chunks));
  const int64_t last =
      k + 1 == chunks ? rows : first_row_at(total / chunks * (k + 1) + std::min(k + 1, total % chunks));
  return {first, last};
}

// How many row chunks: a few per thread (so the dynamic schedule can even out threads
// that run slower, e.g. on a shared machine), none smaller than kMinChunkCost.
inline int64_t chunk_count(const int64_t* off, int64_t rows, const Hubs& hubs, bool parallel) {
  if (!parallel) return 1;
  const int64_t cost = off[rows] - hubs.edges_before.back() + rows * kRowCostEdges;
  const int64_t wanted = static_cast<int64_t>(omp_get_max_threads()) * kChunksPerThread;
  return std::clamp<int64_t>(cost / kMinChunkCost, 1, wanted);
}

// Runs a gather-reduce of `rows` destination rows of `cols` columns over `off`
// [rows + 1]. R is the op's Reducer; kArg whether args are tracked. The fold:
//   typename Fold::Local                 per-thread scratch, built as Local(fold)
//   fold.row(local, s, begin, end, prefetch_end)     reduce and write row s whole
//   fold.piece(local, begin, end, acc [cols], arg [cols])  a hub piece's partial
// out/arg [rows, cols] receive the merged hubs.
template <class R, bool kArg, class T, class Fold>
void run_balanced(const int64_t* off, int64_t rows, int64_t cols, int64_t piece_edges, bool parallel, T* out,
                  int64_t* arg, const Fold& fold, Context& ctx) {
  using Acc = typename R::Acc;
  const Hubs hubs = find_hubs(off, rows, piece_edges);
  const int64_t hub_count = hubs.count();
  const int64_t total_pieces = hubs.piece_start.back();

  Acc* piece_acc = nullptr;
  int64_t* piece_arg = nullptr;
  if (total_pieces > 0) {
    ScratchLayout layout;
    const std::size_t acc_at = layout.add<Acc>(total_pieces * cols);
    const std::size_t arg_at = layout.add<int64_t>(kArg ? total_pieces * cols : 0);
    void* base = ctx.scratch(layout.bytes());
    piece_acc = ScratchLayout::at<Acc>(base, acc_at);
    piece_arg = ScratchLayout::at<int64_t>(base, arg_at);
  }

  const int64_t chunks = chunk_count(off, rows, hubs, parallel);
  auto run_item = [&](typename Fold::Local& local, int64_t item) {
    if (item < chunks) {
      const auto [first, last] = chunk_rows(off, rows, hubs, item, chunks);
      const int64_t prefetch_end = off[last];
      for (int64_t s = first; s < last; ++s) {
        if (off[s + 1] - off[s] > piece_edges) continue;  // a hub: done in pieces
        fold.row(local, s, off[s], off[s + 1], prefetch_end);
      }
    } else {
      const int64_t p = item - chunks;
      int64_t position = 0, rank = 0;
      locate_piece(hubs.piece_start.data(), hub_count, p, position, rank);
      const int64_t s = hubs.rows[position];
      const int64_t begin = off[s] + rank * piece_edges;
      const int64_t end = std::min(off[s + 1], begin + piece_edges);
      fold.piece(local, begin, end, piece_acc + p * cols, kArg ? piece_arg + p * cols : nullptr);
    }
  };
  const int64_t items = chunks + total_pieces;
#pragma omp parallel if (parallel)
  {
    typename Fold::Local local(fold);
    if (hub_count == 0) {
      // No hubs: no merge phase, so no barrier but the region's own (on a busy
      // machine every extra barrier can cost a scheduler time slice).
#pragma omp for schedule(dynamic, 1) nowait
      for (int64_t item = 0; item < items; ++item) run_item(local, item);
    } else {
#pragma omp for schedule(dynamic, 1)
      for (int64_t item = 0; item < items; ++item) run_item(local, item);

      // Then each hub's partials merge in piece order.
#pragma omp for schedule(static) nowait
      for (int64_t i = 0; i < hub_count; ++i) {
        const int64_t s = hubs.rows[i];
        const int64_t count = off[s + 1] - off[s];
        const int64_t first_piece = hubs.piece_start[i];
        for (int64_t c = 0; c < cols; ++c) {
          Acc a = piece_acc[first_piece * cols + c];
          int64_t at = kArg ? piece_arg[first_piece * cols + c] : -1;
          for (int64_t p = first_piece + 1; p < hubs.piece_start[i + 1]; ++p) {
            R::template combine<kArg>(a, at, piece_acc[p * cols + c], kArg ? piece_arg[p * cols + c] : -1);
          }
          out[s * cols + c] = R::finalize(a, count);
          if constexpr (kArg) arg[s * cols + c] = count > 0 ? at : -1;
        }
      }
    }
  }
}

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::gather_reduce_detail
