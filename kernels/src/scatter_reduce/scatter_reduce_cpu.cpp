// scatter_reduce CPU driver (OpenMP): no atomics, two strategies.
//
// Partials (S small next to M): each thread folds a static, contiguous range of
// rows into its own [S, C] slot array; after a barrier the threads merge the
// partials output by output, in thread order, and write out. The slot arrays
// are what the issue calls thread-private partials: they stay in cache when
// S x C is small, and merging them costs threads x S x C, which the choice below
// keeps under an eighth of the fold.
//
// Owner-computes (S large): thread t owns outputs [S t / T, S (t+1) / T). Every
// thread scans the index in chunks, compacts the rows it owns into a small list
// without branches (a data-dependent branch here would mispredict on most rows),
// and folds them in row order, prefetching a few rows ahead. No partials and no
// merge; the index is read once per thread, which is cheap next to the rows.
//
// Both fold with the shared slot logic of scatter_reduce_core.hpp (the packed
// min/max word the CUDA driver uses with atomicMax), specialised at compile time
// for common widths. The partition is static, so results are bitwise identical
// across runs with the same thread count.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "scatter_reduce/scatter_reduce_backends.hpp"
#include "scatter_reduce/scatter_reduce_core.hpp"

namespace edgewise::scatter_reduce_detail {

namespace {

constexpr int64_t kMergeShare = 8;     // partials when threads x S <= M / kMergeShare
constexpr int64_t kOwnerChunk = 4096;  // rows scanned per compaction step (list fits L1)
constexpr int64_t kPrefetchAhead = 8;  // rows prefetched ahead in the owner fold

template <class T, ReduceOp Op, int W>
struct ScatterCpu {
  using S = Slot<Op, T>;
  static constexpr bool kMean = Op == ReduceOp::Mean;
  static constexpr bool kExtremum = Op == ReduceOp::Min || Op == ReduceOp::Max;

  // slot_row[j] (+)= row r of values, j < C (C == W when W > 0).
  static inline void fold_row(S* __restrict slot_row, const T* __restrict value_row, int64_t r, int64_t cols) {
    const int64_t w = W > 0 ? W : cols;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) slot_fold<Op>(slot_row[j], value_row[j], r);
  }

  static inline void merge_row(S* __restrict slot_row, const S* __restrict other, int64_t cols) {
    const int64_t w = W > 0 ? W : cols;
#pragma omp simd
    for (int64_t j = 0; j < w; ++j) slot_merge<Op, T>(slot_row[j], other[j]);
  }

  // Writes outputs [s_begin, s_end) from their final slots.
  static void finalize_rows(const S* slots, const int64_t* counts, const T* values, int64_t cols, int64_t s_begin,
                            int64_t s_end, MatrixView<T> out, MatrixView<int64_t> arg) {
    const int64_t w = W > 0 ? W : cols;
    for (int64_t s = s_begin; s < s_end; ++s) {
      const int64_t count = kMean ? counts[s] : 1;
      const S* slot_row = slots + s * cols;
      T* out_row = out.row(s);
      if (kExtremum && arg.present()) {
        int64_t* arg_row = arg.row(s);
        for (int64_t j = 0; j < w; ++j) slot_finalize<Op, T>(slot_row[j], count, values, cols, j, out_row[j], arg_row[j]);
      } else {
        int64_t unused;
        for (int64_t j = 0; j < w; ++j) slot_finalize<Op, T>(slot_row[j], count, values, cols, j, out_row[j], unused);
      }
    }
  }

  template <class I>
  static void run_partials(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out,
                           MatrixView<int64_t> arg, Context& ctx) {
    const int64_t M = values.rows, C = values.cols, nS = out.rows;
    const int max_threads = omp_get_max_threads();
    ScratchLayout layout;
    const std::size_t slots_at = layout.add<S>(int64_t{max_threads} * nS * C);
    const std::size_t counts_at = layout.add<int64_t>(kMean ? int64_t{max_threads} * nS : 0);
    void* base = ctx.scratch(layout.bytes());
    S* slots = ScratchLayout::at<S>(base, slots_at);
    int64_t* counts = ScratchLayout::at<int64_t>(base, counts_at);
    const T* v = values.data;
    const I* idx = index.data;

#pragma omp parallel num_threads(max_threads)
    {
      const int64_t threads = omp_get_num_threads();
      const int64_t t = omp_get_thread_num();
      S* mine = slots + t * nS * C;
      int64_t* my_counts = counts + t * nS;
      std::memset(static_cast<void*>(mine), 0, static_cast<std::size_t>(nS * C) * sizeof(S));  // 0: identity of every slot
      if constexpr (kMean) std::fill(my_counts, my_counts + nS, int64_t{0});
      const int64_t r_end = M * (t + 1) / threads;
      for (int64_t r = M * t / threads; r < r_end; ++r) {
        const int64_t s = static_cast<int64_t>(idx[r]);
        fold_row(mine + s * C, v + r * C, r, C);
        if constexpr (kMean) ++my_counts[s];
      }
#pragma omp barrier
      // Each output is merged by one thread, partials in thread order (fixed for a
      // given thread count), into thread 0's partial, then written out.
#pragma omp for schedule(static)
      for (int64_t s = 0; s < nS; ++s) {
        for (int64_t u = 1; u < threads; ++u) {
          merge_row(slots + s * C, slots + (u * nS + s) * C, C);
          if constexpr (kMean) counts[s] += counts[u * nS + s];
        }
        finalize_rows(slots, counts, v, C, s, s + 1, out, arg);
      }
    }
  }

  template <class I>
  static void run_owner(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out,
                        MatrixView<int64_t> arg, Context& ctx) {
    const int64_t M = values.rows, C = values.cols, nS = out.rows;
    ScratchLayout layout;
    const std::size_t slots_at = layout.add<S>(nS * C);
    const std::size_t counts_at = layout.add<int64_t>(kMean ? nS : 0);
    void* base = ctx.scratch(layout.bytes());
    S* slots = ScratchLayout::at<S>(base, slots_at);
    int64_t* counts = ScratchLayout::at<int64_t>(base, counts_at);
    const T* v = values.data;
    const I* idx = index.data;

#pragma omp parallel
    {
      const int64_t threads = omp_get_num_threads();
      const int64_t t = omp_get_thread_num();
      const int64_t lo = nS * t / threads;
      const int64_t span = nS * (t + 1) / threads - lo;
      std::memset(static_cast<void*>(slots + lo * C), 0, static_cast<std::size_t>(span * C) * sizeof(S));
      if constexpr (kMean) std::fill(counts + lo, counts + lo + span, int64_t{0});
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
            __builtin_prefetch(slots + static_cast<int64_t>(idx[ahead]) * C, 1);
          }
          const int64_t r = c0 + list[q];
          const int64_t s = static_cast<int64_t>(idx[r]);
          fold_row(slots + s * C, v + r * C, r, C);
          if constexpr (kMean) ++counts[s];
        }
      }
      finalize_rows(slots, counts, v, C, lo, lo + span, out, arg);
    }
  }

  template <class I>
  static void run(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
                  Context& ctx) {
    const int64_t threads = omp_get_max_threads();
    if (threads == 1 || threads * out.rows <= values.rows / kMergeShare) {
      run_partials(values, index, out, arg, ctx);
    } else {
      run_owner(values, index, out, arg, ctx);
    }
  }
};

template <class T, ReduceOp Op, class I>
void run_width(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, MatrixView<int64_t> arg,
               Context& ctx) {
  switch (values.cols) {
    case 1: return ScatterCpu<T, Op, 1>::run(values, index, out, arg, ctx);
    case 2: return ScatterCpu<T, Op, 2>::run(values, index, out, arg, ctx);
    case 4: return ScatterCpu<T, Op, 4>::run(values, index, out, arg, ctx);
    case 8: return ScatterCpu<T, Op, 8>::run(values, index, out, arg, ctx);
    case 16: return ScatterCpu<T, Op, 16>::run(values, index, out, arg, ctx);
    case 32: return ScatterCpu<T, Op, 32>::run(values, index, out, arg, ctx);
    case 64: return ScatterCpu<T, Op, 64>::run(values, index, out, arg, ctx);
    case 128: return ScatterCpu<T, Op, 128>::run(values, index, out, arg, ctx);
    default: return ScatterCpu<T, Op, 0>::run(values, index, out, arg, ctx);
  }
}

}  // namespace

template <class T, class I>
void scatter_reduce_cpu(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                        MatrixView<int64_t> arg, Context& ctx) {
  switch (op) {
    case ReduceOp::Sum: return run_width<T, ReduceOp::Sum>(values, index, out, arg, ctx);
    case ReduceOp::Mean: return run_width<T, ReduceOp::Mean>(values, index, out, arg, ctx);
    case ReduceOp::Min: return run_width<T, ReduceOp::Min>(values, index, out, arg, ctx);
    case ReduceOp::Max: return run_width<T, ReduceOp::Max>(values, index, out, arg, ctx);
  }
}

template <class I>
int64_t first_bad_index_cpu(VectorView<const I> index, int64_t segments) {
  int64_t first = index.size;
#pragma omp parallel for simd schedule(static) reduction(min : first)
  for (int64_t i = 0; i < index.size; ++i) {
    first = index_in_range(index.data[i], segments) ? first : std::min(first, i);
  }
  return first == index.size ? -1 : first;
}

#define EW_INSTANTIATE(T, I)                                                                                  \
  template void scatter_reduce_cpu<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                         MatrixView<int64_t>, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(int32_t, int32_t)
EW_INSTANTIATE(int32_t, int64_t)
EW_INSTANTIATE(uint32_t, int32_t)
EW_INSTANTIATE(uint32_t, int64_t)
#undef EW_INSTANTIATE
template int64_t first_bad_index_cpu<int32_t>(VectorView<const int32_t>, int64_t);
template int64_t first_bad_index_cpu<int64_t>(VectorView<const int64_t>, int64_t);

}  // namespace edgewise::scatter_reduce_detail
