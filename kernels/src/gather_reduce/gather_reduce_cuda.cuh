// The CUDA gather-reduce engine, shared by segment_reduce (ContiguousRows) and spmm
// (GatherRows, ArgGradRows): included by their .cu drivers, generic over the source.
//
// A group of G lanes (G = 1, 8, 32 or 128, chosen from the mean work per destination
// row) owns one row; its lanes spread over column vectors (16-byte loads when C allows
// and the rows are aligned) and interleaved edges; each lane folds its edges in
// increasing order and the lanes' partials merge through shared memory in a fixed
// order. Rows longer than a fixed piece are cut into pieces (one group each) whose
// partials a third kernel merges in piece order with the op's merge, so a hub does not
// serialise one group. No atomics: every output element has one writer, so results are
// bitwise reproducible. Index arithmetic is 64-bit throughout. Ops enter only through
// their Reducer trait (common/reducer.hpp).
#pragma once

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/reducer.hpp"
#include "gather_reduce/gather_reduce_core.hpp"

namespace edgewise::gather_reduce_detail {

inline constexpr int kGatherThreads = 256;
inline constexpr int64_t kGpuPieceElements = int64_t{1} << 15;

template <class T, ReduceOp Op, bool kArg, int G, int V, class Source>
struct GroupGather {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;
  static constexpr int kGroups = kGatherThreads / G;

  struct Shared {
    Acc acc[kGatherThreads * V];
    int64_t arg[kArg ? kGatherThreads * V : 1];
  };

  // Reduces the messages of edges [begin, end) for every column. All threads of the
  // block call this the same number of times (it holds __syncthreads); `active` says
  // whether this group has real work. Results go to `emit(column, acc, arg)`.
  template <class Emit>
  __device__ static void run(const Source& source, int64_t cols, int64_t begin, int64_t end, bool active,
                             Shared& sh, Emit emit) {
    const int group_lane = static_cast<int>(threadIdx.x % G);
    const int group_base = static_cast<int>(threadIdx.x) - group_lane;
    const int64_t units = cols / V;
    const int units_per_pass = static_cast<int>(units < G ? units : G);
    const int rows_per_pass = G / units_per_pass;
    const int row_sub = group_lane / units_per_pass;
    const int unit_in_pass = group_lane % units_per_pass;

    for (int64_t u0 = 0; u0 < units; u0 += units_per_pass) {
      const int64_t u = u0 + unit_in_pass;
      Acc acc[V];
      int64_t arg[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        acc[j] = R::identity();
        arg[j] = -1;
      }
      if (active && row_sub < rows_per_pass && u < units) {
        for (int64_t e = begin + row_sub; e < end; e += rows_per_pass) {
          const auto edge = source.template edge<true>(e);
          T m[V];
          Source::template load<V>(edge, u * V, m);
#pragma unroll
          for (int j = 0; j < V; ++j) {
            if constexpr (kArg) {
              R::accumulate(acc[j], arg[j], m[j], e);
            } else {
              R::accumulate(acc[j], m[j]);
            }
          }
        }
      }
#pragma unroll
      for (int j = 0; j < V; ++j) {
        sh.acc[threadIdx.x * V + j] = acc[j];
        if constexpr (kArg) sh.arg[threadIdx.x * V + j] = arg[j];
      }
      __syncthreads();
      if (active && row_sub == 0 && u < units) {
        for (int k = 1; k < rows_per_pass; ++k) {
          const int other = group_base + k * units_per_pass + unit_in_pass;
#pragma unroll
          for (int j = 0; j < V; ++j) {
            R::template combine<kArg>(acc[j], arg[j], sh.acc[other * V + j], kArg ? sh.arg[other * V + j] : -1);
          }
        }
#pragma unroll
        for (int j = 0; j < V; ++j) emit(u * V + j, acc[j], arg[j]);
      }
      __syncthreads();
    }
  }
};

template <class T, ReduceOp Op, bool kArg, int G, int V, class Source>
__global__ void __launch_bounds__(kGatherThreads)
    gather_reduce_short_kernel(Source source, const int64_t* __restrict__ offsets, int64_t rows, int64_t cols,
                      int64_t piece_edges, T* __restrict__ out, int64_t* __restrict__ arg_out) {
  using GG = GroupGather<T, Op, kArg, G, V, Source>;
  using R = typename GG::R;
  __shared__ typename GG::Shared sh;
  const int64_t group = threadIdx.x / G;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * GG::kGroups; base < rows;
       base += static_cast<int64_t>(gridDim.x) * GG::kGroups) {
    const int64_t s = base + group;
    int64_t begin = 0, end = 0;
    if (s < rows) {
      begin = offsets[s];
      end = offsets[s + 1];
    }
    const bool active = s < rows && end - begin <= piece_edges;
    const int64_t count = end - begin;
    GG::run(source, cols, begin, end, active, sh, [&](int64_t c, typename GG::Acc acc, int64_t a) {
      out[s * cols + c] = R::finalize(acc, count);
      if constexpr (kArg) arg_out[s * cols + c] = count > 0 ? a : -1;
    });
  }
}

template <class T, ReduceOp Op, bool kArg, int G, int V, class Source>
__global__ void __launch_bounds__(kGatherThreads)
    gather_reduce_piece_kernel(Source source, const int64_t* __restrict__ offsets, const int64_t* __restrict__ piece_start,
                      int64_t rows, int64_t total_pieces, int64_t cols, int64_t piece_edges,
                      typename Reducer<Op, T>::Acc* __restrict__ piece_acc, int64_t* __restrict__ piece_arg) {
  using GG = GroupGather<T, Op, kArg, G, V, Source>;
  __shared__ typename GG::Shared sh;
  const int64_t group = threadIdx.x / G;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * GG::kGroups; base < total_pieces;
       base += static_cast<int64_t>(gridDim.x) * GG::kGroups) {
    const int64_t p = base + group;
    int64_t begin = 0, end = 0;
    if (p < total_pieces) {
      int64_t s = 0, rank = 0;
      locate_piece(piece_start, rows, p, s, rank);
      begin = offsets[s] + rank * piece_edges;
      end = offsets[s + 1] < begin + piece_edges ? offsets[s + 1] : begin + piece_edges;
    }
    GG::run(source, cols, begin, end, p < total_pieces, sh, [&](int64_t c, typename GG::Acc acc, int64_t a) {
      piece_acc[p * cols + c] = acc;
      if constexpr (kArg) piece_arg[p * cols + c] = a;
    });
  }
}

template <class T, ReduceOp Op, bool kArg>
__global__ void gather_reduce_merge_pieces_kernel(const int64_t* __restrict__ offsets, const int64_t* __restrict__ piece_start,
                                         int64_t rows, int64_t cols,
                                         const typename Reducer<Op, T>::Acc* __restrict__ piece_acc,
                                         const int64_t* __restrict__ piece_arg, T* __restrict__ out,
                                         int64_t* __restrict__ arg_out) {
  using R = Reducer<Op, T>;
  for (int64_t i = detail::grid_thread_index(); i < rows * cols; i += detail::grid_thread_count()) {
    const int64_t s = i / cols;
    const int64_t c = i % cols;
    const int64_t first = piece_start[s];
    const int64_t last = piece_start[s + 1];
    if (first == last) continue;  // reduced whole by the short kernel
    typename R::Acc acc = piece_acc[first * cols + c];
    int64_t a = kArg ? piece_arg[first * cols + c] : -1;
    for (int64_t p = first + 1; p < last; ++p) {
      R::template combine<kArg>(acc, a, piece_acc[p * cols + c], kArg ? piece_arg[p * cols + c] : -1);
    }
    out[i] = R::finalize(acc, offsets[s + 1] - offsets[s]);
    if constexpr (kArg) arg_out[i] = a;
  }
}

static __global__ void gather_reduce_piece_count_kernel(const int64_t* __restrict__ offsets, int64_t rows, int64_t piece_edges,
                                        int64_t* __restrict__ counts) {
  for (int64_t s = detail::grid_thread_index(); s <= rows; s += detail::grid_thread_count()) {
    counts[s] = s < rows ? piece_count(offsets[s + 1] - offsets[s], piece_edges) : 0;
  }
}

template <class T, ReduceOp Op, bool kArg, int G, int V, class Source>
void launch(const Source& source, const RowsOut<T>& dest, Context& ctx) {
  using Acc = typename Reducer<Op, T>::Acc;
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t S = dest.rows;
  const int64_t E = dest.edges;
  const int64_t C = dest.cols;
  const int64_t piece_edges = std::max<int64_t>(piece_rows(C, kGpuPieceElements), 4 * G);
  constexpr int64_t kGroups = kGatherThreads / G;

  // Scratch: piece counts -> exclusive scan, CUB temp, partials. A hub has more than
  // piece_edges edges, so there are at most 2 E / piece_edges pieces.
  const int64_t max_pieces = 2 * (E / piece_edges) + 1;
  size_t cub_bytes = 0;
  EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<int64_t*>(nullptr),
                                              static_cast<int64_t*>(nullptr), S + 1, stream));
  ScratchLayout layout;
  const size_t counts_at = layout.add<int64_t>(S + 1);
  const size_t start_at = layout.add<int64_t>(S + 1);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(cub_bytes));
  const size_t acc_at = layout.add<Acc>(max_pieces * C);
  const size_t arg_at = layout.add<int64_t>(kArg ? max_pieces * C : 0);
  void* base = ctx.scratch(layout.bytes());
  int64_t* d_counts = ScratchLayout::at<int64_t>(base, counts_at);
  int64_t* d_piece_start = ScratchLayout::at<int64_t>(base, start_at);

  gather_reduce_piece_count_kernel<<<detail::grid_size(S + 1, kGatherThreads), kGatherThreads, 0, stream>>>(dest.offsets, S, piece_edges,
                                                                                       d_counts);
  EW_CUDA_CHECK_LAUNCH(stream);
  EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ScratchLayout::at<std::byte>(base, cub_at), cub_bytes, d_counts,
                                              d_piece_start, S + 1, stream));

  gather_reduce_short_kernel<T, Op, kArg, G, V, Source><<<detail::grid_size(S, kGroups), kGatherThreads, 0, stream>>>(
      source, dest.offsets, S, C, piece_edges, dest.out, dest.arg);
  EW_CUDA_CHECK_LAUNCH(stream);

  int64_t h_total_pieces = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_total_pieces, d_piece_start + S, sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (h_total_pieces == 0) return;

  Acc* d_piece_acc = ScratchLayout::at<Acc>(base, acc_at);
  int64_t* d_piece_arg = ScratchLayout::at<int64_t>(base, arg_at);
  gather_reduce_piece_kernel<T, Op, kArg, G, V, Source><<<detail::grid_size(h_total_pieces, kGroups), kGatherThreads, 0, stream>>>(
      source, dest.offsets, d_piece_start, S, h_total_pieces, C, piece_edges, d_piece_acc, d_piece_arg);
  EW_CUDA_CHECK_LAUNCH(stream);
  gather_reduce_merge_pieces_kernel<T, Op, kArg><<<detail::grid_size(S * C, kGatherThreads), kGatherThreads, 0, stream>>>(
      dest.offsets, d_piece_start, S, C, d_piece_acc, d_piece_arg, dest.out, dest.arg);
  EW_CUDA_CHECK_LAUNCH(stream);
}

// Lanes per row from the mean work (column vectors x edges) per row: narrow rows get
// one lane or a sub-warp, wide or long ones a warp or four.
template <class T, ReduceOp Op, bool kArg, int V, class Source>
void launch_vector(const Source& source, const RowsOut<T>& dest, Context& ctx) {
  const int64_t units = dest.cols / V;
  const int64_t mean_work = dest.edges / std::max<int64_t>(dest.rows, 1) * units;
  if (mean_work <= 2) return launch<T, Op, kArg, 1, V>(source, dest, ctx);
  if (mean_work <= 16) return launch<T, Op, kArg, 8, V>(source, dest, ctx);
  if (mean_work <= 1024) return launch<T, Op, kArg, 32, V>(source, dest, ctx);
  return launch<T, Op, kArg, 128, V>(source, dest, ctx);
}

template <class T, ReduceOp Op, bool kArg, class Source>
void launch_op(const Source& source, const RowsOut<T>& dest, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  // 16-byte loads (four floats per lane) when rows allow. Float only: each vector
  // width is another set of kernels per op and G, and the other element types
  // (gradient checks, counts) are not hot enough to pay for them in build time.
  if constexpr (std::is_same_v<T, float>) {
    constexpr int kVector = 4;
    const bool aligned16 = reinterpret_cast<uintptr_t>(source.rows_base()) % 16 == 0;
    if (dest.cols % kVector == 0 && aligned16) return launch_vector<T, Op, kArg, kVector>(source, dest, ctx);
  }
  launch_vector<T, Op, kArg, 1>(source, dest, ctx);
}


// Runs the gather-reduce of `source` into `dest` for the runtime op (args tracked
// when dest.arg is given and the op has them).
template <class T, class Source>
void gather_reduce_cuda_dispatch(const Source& source, const RowsOut<T>& dest, ReduceOp op, Context& ctx) {
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    if constexpr (kDefinedFor<Op, T>) {  // the entry points rejected the rest
      if constexpr (Reducer<Op, T>::kHasArg) {
        if (dest.arg != nullptr) return launch_op<T, Op, true, Source>(source, dest, ctx);
      }
      launch_op<T, Op, false, Source>(source, dest, ctx);
    }
  });
}

}  // namespace edgewise::gather_reduce_detail
