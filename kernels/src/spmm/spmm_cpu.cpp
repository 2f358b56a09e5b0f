// spmm CPU driver (OpenMP): gather-reduce over CSR rows, and the weight gradient.
//
// Gathers are latency-bound, not bandwidth-bound, so the loop over a row's edges
// prefetches the gathered rows kPrefetchEdges edges ahead, and the feature width is a
// compile-time constant for the common widths (the accumulators stay in registers).
// Work distribution is the engine's shared scheduler (gather_reduce/gather_reduce_cpu.hpp,
// also segment_reduce's): rows balanced by edges in chunks taken dynamically, hubs cut
// into fixed pieces merged in order. Each destination row is reduced by one thread in
// edge order: no atomics, and results are bitwise identical at any thread count.
#include <omp.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "cpu_isa/row_width.hpp"
#include "gather_reduce/gather_reduce_cpu.hpp"
#include "spmm/spmm_backends.hpp"

namespace edgewise::spmm_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {

using gather_reduce_detail::kChunksPerThread;
using gather_reduce_detail::kMinChunkCost;

constexpr int64_t kCpuPieceElements = int64_t{1} << 18;  // a hub piece: ~1 MB of float messages
// How far ahead gathered rows are prefetched. Far: at 1M nodes x 32 floats the rows
// come from DRAM, and 64 edges ahead measured 1.3-1.5x faster than 20 (and 5-25 %
// at 100K nodes x 64, rows from L3); 128 was no better.
constexpr int64_t kPrefetchEdges = 64;
constexpr uintptr_t kLine = 64;
// Below this many gathered elements one thread does the work: a parallel region costs
// more than it saves (and far more when the machine is oversubscribed).
constexpr int64_t kParallelMinElements = int64_t{1} << 15;
constexpr int64_t kDotLanes = 16;  // partial sums of the weight gradient's dot product

// Prefetches (for reading, into L1) every cache line of `bytes` (> 0) bytes at `p`.
// always_inline on purpose: out of line, GCC's pure-const analysis takes a function that
// only prefetches (its loops assumed finite) for side-effect free and deletes the calls —
// which silently cost 6x on the gathers.
[[gnu::always_inline]] inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t k = 0; k < bytes; k += static_cast<int64_t>(kLine)) __builtin_prefetch(c + k, 0, 3);
  __builtin_prefetch(c + bytes - 1, 0, 3);  // the last line when p is not line-aligned
}

// The gathered row of edge e (and, when scaled, what its coefficient reads).
template <bool kScaled, class T, class I>
[[gnu::always_inline]] inline void prefetch_edge(const GatherRows<T, I>& source, int64_t e, int64_t row_bytes) {
  prefetch_bytes(source.row_of(e), row_bytes);
  if constexpr (kScaled) {
    const EdgeScale<T>& scale = source.scale;
    if (scale.weights != nullptr && scale.weight_ids != nullptr) __builtin_prefetch(scale.weights + scale.weight_ids[e]);
    if (scale.degree_offsets != nullptr) __builtin_prefetch(scale.degree_offsets + source.indices[e]);
  }
}

template <bool kScaled, class T, class I>
[[gnu::always_inline]] inline void prefetch_edge(const ArgGradRows<T, I>& source, int64_t t, int64_t row_bytes) {
  prefetch_bytes(source.row_of(t), row_bytes);
  prefetch_bytes(source.arg_row_of(t), row_bytes / static_cast<int64_t>(sizeof(T)) * 8);
  if constexpr (kScaled) __builtin_prefetch(source.weights + source.edge_ids[t]);
}

template <class T, ReduceOp Op, bool kArg, bool kScaled, int W, class Source>
struct GatherReduceCpu {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;

  // The edge loop over `w` columns of acc/arg (w is W when W > 0, so the inner loops
  // have a compile-time trip count and the accumulators live in registers).
  template <class Width>
  static void fold_loop(const Source& source, Width w, int64_t begin, int64_t end, int64_t prefetch_end,
                        Acc* __restrict acc, int64_t* __restrict arg) {
    const int64_t row_bytes = static_cast<int64_t>(w) * static_cast<int64_t>(sizeof(T));
    for (int64_t j = 0; j < w; ++j) {
      acc[j] = R::identity();
      if constexpr (kArg) arg[j] = -1;
    }
    for (int64_t e = begin; e < end; ++e) {
      if (e + kPrefetchEdges < prefetch_end) prefetch_edge<kScaled>(source, e + kPrefetchEdges, row_bytes);
      const auto edge = source.template edge<kScaled>(e);
      if constexpr (kArg) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) R::accumulate(acc[j], arg[j], Source::template value<kScaled>(edge, j), e);
      } else {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) R::accumulate(acc[j], Source::template value<kScaled>(edge, j));
      }
    }
  }

  static void write_row(const Acc* acc, const int64_t* arg, int64_t cols, int64_t count, T* __restrict out_row,
                        int64_t* __restrict arg_row) {
    for (int64_t j = 0; j < cols; ++j) out_row[j] = R::finalize(acc[j], count);
    if constexpr (kArg) {
      for (int64_t j = 0; j < cols; ++j) arg_row[j] = count > 0 ? arg[j] : -1;
    }
  }

  // Reduces destination row s into out_row/arg_row, prefetching up to prefetch_end.
  // heap_acc/heap_arg [C] are the accumulators of the generic width (W == 0).
  static void reduce_row(const Source& source, int64_t cols, int64_t begin, int64_t end, int64_t prefetch_end,
                         T* out_row, int64_t* arg_row, Acc* heap_acc, int64_t* heap_arg) {
    if constexpr (W > 0) {
      Acc acc[W];
      int64_t arg[kArg ? W : 1];
      fold_loop(source, std::integral_constant<int64_t, W>{}, begin, end, prefetch_end, acc, arg);
      write_row(acc, arg, W, end - begin, out_row, arg_row);
    } else {
      fold_loop(source, cols, begin, end, prefetch_end, heap_acc, heap_arg);
      write_row(heap_acc, heap_arg, cols, end - begin, out_row, arg_row);
    }
  }

  // Folds edges [begin, end) of a hub into its piece partial acc_out/arg_out [C].
  static void reduce_piece(const Source& source, int64_t cols, int64_t begin, int64_t end, Acc* __restrict acc_out,
                           int64_t* __restrict arg_out) {
    if constexpr (W > 0) {
      Acc acc[W];
      int64_t arg[kArg ? W : 1];
      fold_loop(source, std::integral_constant<int64_t, W>{}, begin, end, end, acc, arg);
      for (int64_t j = 0; j < W; ++j) {
        acc_out[j] = acc[j];
        if constexpr (kArg) arg_out[j] = arg[j];
      }
    } else {
      fold_loop(source, cols, begin, end, end, acc_out, arg_out);
    }
  }

  // The fold the shared scheduler (gather_reduce_cpu.hpp) runs.
  struct Fold {
    const Source& source;
    const RowsOut<T>& dest;
    // Generic-width accumulators, one buffer per thread (compile-time widths use registers).
    struct Local {
      std::vector<Acc> acc;
      std::vector<int64_t> arg;
      explicit Local(const Fold& f) : acc(W > 0 ? 0 : f.dest.cols), arg(W > 0 || !kArg ? 0 : f.dest.cols) {}
    };
    void row(Local& local, int64_t s, int64_t begin, int64_t end, int64_t prefetch_end) const {
      const int64_t C = dest.cols;
      reduce_row(source, C, begin, end, prefetch_end, dest.out + s * C, kArg ? dest.arg + s * C : nullptr,
                 local.acc.data(), local.arg.data());
    }
    void piece(Local&, int64_t begin, int64_t end, Acc* acc, int64_t* arg) const {
      reduce_piece(source, dest.cols, begin, end, acc, arg);
    }
  };

  static void run(const Source& source, const RowsOut<T>& dest, Context& ctx) {
    const int64_t S = dest.rows;
    const int64_t C = dest.cols;
    const int64_t* off = dest.offsets;
    const bool parallel = (off[S] + S) * C >= kParallelMinElements;
    gather_reduce_detail::run_balanced<R, kArg>(off, S, C, piece_rows(C, kCpuPieceElements), parallel, dest.out,
                                                dest.arg, Fold{source, dest}, ctx);
  }
};

template <class T, ReduceOp Op, bool kArg, bool kScaled, class Source>
void run_width(const Source& source, const RowsOut<T>& dest, Context& ctx) {
  visit_row_width<T, Op>(dest.cols, [&](auto w) {
    GatherReduceCpu<T, Op, kArg, kScaled, decltype(w)::value, Source>::run(source, dest, ctx);
  });
}

// Weights (or a degree scale) are a template switch, not a branch in the inner loop.
template <class T, ReduceOp Op, bool kArg, class Source>
void run_scaled(const Source& source, const RowsOut<T>& dest, bool scaled, Context& ctx) {
  if (scaled) {
    run_width<T, Op, kArg, true>(source, dest, ctx);
  } else {
    run_width<T, Op, kArg, false>(source, dest, ctx);
  }
}

template <bool kArg, class T, class I>
void weight_backward_rows(const int64_t* off, int64_t rows, int64_t E, const I* indices, const T* x,
                          const T* grad_out, const int64_t* arg, int64_t cols, bool mean, T* grad_w) {
  const int64_t row_bytes = cols * static_cast<int64_t>(sizeof(T));
  // Equal edge ranges, taken dynamically; each finds its first row once, then walks the
  // offsets. Every grad_w[e] is one thread's fixed-order dot product.
  const bool parallel = E * cols >= kParallelMinElements;
  const int64_t chunks =
      parallel ? std::clamp<int64_t>(E / kMinChunkCost, 1, omp_get_max_threads() * kChunksPerThread) : 1;
#pragma omp parallel for schedule(dynamic, 1) if (parallel)
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t begin = E / chunks * k + std::min(k, E % chunks);
    const int64_t end = E / chunks * (k + 1) + std::min(k + 1, E % chunks);
    int64_t v = begin < end ? upper_bound_index(off, 0, rows + 1, begin) - 1 : 0;
    for (int64_t e = begin; e < end; ++e) {
      while (off[v + 1] <= e) ++v;
      if (e + kPrefetchEdges < end) prefetch_bytes(x + static_cast<int64_t>(indices[e + kPrefetchEdges]) * cols, row_bytes);
      const T* x_row = x + static_cast<int64_t>(indices[e]) * cols;
      const T* g_row = grad_out + v * cols;
      const int64_t* arg_row = kArg ? arg + v * cols : nullptr;
      // kDotLanes partial sums in a fixed order, not a simd reduction: that one's order
      // follows the vector width, so each ISA level would round differently.
      T lanes[kDotLanes] = {};
      int64_t c = 0;
      for (; c + kDotLanes <= cols; c += kDotLanes) {
#pragma omp simd
        for (int64_t l = 0; l < kDotLanes; ++l)
          lanes[l] += weight_grad_term<kArg>(g_row[c + l], x_row[c + l], kArg ? arg_row[c + l] : 0, e);
      }
      for (int64_t l = 0; c < cols; ++c, ++l)
        lanes[l] += weight_grad_term<kArg>(g_row[c], x_row[c], kArg ? arg_row[c] : 0, e);
      T dot = T(0);
      for (int64_t l = 0; l < kDotLanes; ++l) dot += lanes[l];
      grad_w[e] = dot * weight_grad_scale<T>(mean, off[v + 1] - off[v]);
    }
  }
}

}  // namespace

template <class T, class I>
void gather_reduce_cpu(const GatherRows<T, I>& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx) {
  const bool scaled = !source.scale.trivial();
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if constexpr (Reducer<Op, T>::kHasArg) {
      if (dest.arg != nullptr) return run_scaled<T, Op, true>(source, dest, scaled, ctx);
    }
    run_scaled<T, Op, false>(source, dest, scaled, ctx);
  });
}

// The min/max backward is a sum of masked messages.
template <class T, class I>
void gather_reduce_cpu(const ArgGradRows<T, I>& source, const RowsOut<T>& dest, ReduceOp, Context& ctx) {
  run_scaled<T, ReduceOp::Sum, false, ArgGradRows<T, I>>(source, dest, source.weights != nullptr, ctx);
}

template <class T, class I>
void weight_backward_cpu(const int64_t* offsets, int64_t rows, int64_t edges, const I* indices, const T* x,
                         const T* grad_out, const int64_t* arg, int64_t cols, ReduceOp op, T* grad_w) {
  const bool mean = backward_rule(op) == BackwardRule::Mean;
  if (backward_rule(op) == BackwardRule::Arg) {
    weight_backward_rows<true>(offsets, rows, edges, indices, x, grad_out, arg, cols, mean, grad_w);
  } else {
    weight_backward_rows<false>(offsets, rows, edges, indices, x, grad_out, arg, cols, mean, grad_w);
  }
}

#define EW_INSTANTIATE(T, I)                                                                                      \
  template void gather_reduce_cpu<T, I>(const GatherRows<T, I>&, const RowsOut<T>&, ReduceOp, Context&);          \
  template void gather_reduce_cpu<T, I>(const ArgGradRows<T, I>&, const RowsOut<T>&, ReduceOp, Context&);         \
  template void weight_backward_cpu<T, I>(const int64_t*, int64_t, int64_t, const I*, const T*, const T*,        \
                                          const int64_t*, int64_t, ReduceOp, T*);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
#if EW_CPU_ISA_LEVEL == 0  // double: baseline copy only (kIsaDispatchedElement)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
#endif
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::spmm_detail
