// segment_reduce CUDA driver.
//
// Granularity follows segment length: a group of G lanes (G = 1, 8, 32 or 128,
// chosen from the mean work per segment) owns one segment, its lanes spread over
// column vectors (16-byte loads when C allows) and interleaved rows; the lanes'
// partials merge through shared memory in a fixed order. Segments longer than a
// fixed piece are cut into pieces (one group each) whose partials a third kernel
// merges in piece order, so a hub does not serialise one group. No atomics:
// every output element has one writer, so results are bitwise reproducible.
// Index arithmetic is 64-bit throughout.
#include <cub/device/device_scan.cuh>

#include <algorithm>

#include "common/cuda_check.hpp"
#include "common/launch.cuh"
#include "edgewise/kernels/common/reducer.hpp"
#include "segment_reduce/segment_reduce_backends.hpp"
#include "segment_reduce/segment_reduce_core.hpp"

namespace edgewise::segment_reduce_detail {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kGpuPieceElements = int64_t{1} << 15;

template <class T, int V>
struct alignas(sizeof(T) * V) Packed {
  T v[V];
};

// Where a group's result goes: a finished segment row, or a piece partial.
enum class Sink { Segment, Piece };

template <class T, ReduceOp Op, bool kArg, int G, int V>
struct GroupReduce {
  using R = Reducer<Op, T>;
  using Acc = typename R::Acc;
  static constexpr int kGroups = kThreads / G;

  struct Shared {
    Acc acc[kThreads * V];
    int64_t arg[kArg ? kThreads * V : 1];
  };

  // Reduces rows [begin, end) of every column. All threads of the block call this
  // the same number of times (it holds __syncthreads); `active` says whether this
  // group has real work. The result goes to `emit(unit, j, acc, arg)`.
  template <class Emit>
  __device__ static void run(const T* __restrict__ values, int64_t cols, int64_t begin, int64_t end,
                             bool active, Shared& sh, Emit emit) {
    const int group_lane = static_cast<int>(threadIdx.x % G);
    const int group_base = static_cast<int>(threadIdx.x - group_lane);
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
        for (int64_t r = begin + row_sub; r < end; r += rows_per_pass) {
          const Packed<T, V> p = *reinterpret_cast<const Packed<T, V>*>(values + r * cols + u * V);
#pragma unroll
          for (int j = 0; j < V; ++j) {
            if constexpr (kArg) {
              R::accumulate(acc[j], arg[j], p.v[j], r);
            } else {
              R::accumulate(acc[j], p.v[j]);
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

template <class T, ReduceOp Op, bool kArg, int G, int V>
__global__ void __launch_bounds__(kThreads)
    segment_reduce_short_kernel(const T* __restrict__ values, const int64_t* __restrict__ offsets,
                                int64_t segments, int64_t cols, int64_t rows_per_piece, T* __restrict__ out,
                                int64_t* __restrict__ arg_out) {
  using GR = GroupReduce<T, Op, kArg, G, V>;
  using R = typename GR::R;
  __shared__ typename GR::Shared sh;
  const int64_t group = threadIdx.x / G;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * GR::kGroups; base < segments;
       base += static_cast<int64_t>(gridDim.x) * GR::kGroups) {
    const int64_t s = base + group;
    int64_t begin = 0, end = 0;
    if (s < segments) {
      begin = offsets[s];
      end = offsets[s + 1];
    }
    const bool active = s < segments && end - begin <= rows_per_piece;
    const int64_t count = end - begin;
    GR::run(values, cols, begin, end, active, sh, [&](int64_t c, typename GR::Acc acc, int64_t a) {
      out[s * cols + c] = R::finalize(acc, count);
      if constexpr (kArg) arg_out[s * cols + c] = count > 0 ? a : -1;
    });
  }
}

template <class T, ReduceOp Op, bool kArg, int G, int V>
__global__ void __launch_bounds__(kThreads)
    segment_reduce_piece_kernel(const T* __restrict__ values, const int64_t* __restrict__ offsets,
                                const int64_t* __restrict__ piece_start, int64_t segments, int64_t total_pieces,
                                int64_t cols, int64_t rows_per_piece,
                                typename Reducer<Op, T>::Acc* __restrict__ piece_acc,
                                int64_t* __restrict__ piece_arg) {
  using GR = GroupReduce<T, Op, kArg, G, V>;
  __shared__ typename GR::Shared sh;
  const int64_t group = threadIdx.x / G;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * GR::kGroups; base < total_pieces;
       base += static_cast<int64_t>(gridDim.x) * GR::kGroups) {
    const int64_t p = base + group;
    int64_t begin = 0, end = 0;
    if (p < total_pieces) {
      int64_t s = 0, rank = 0;
      locate_piece(piece_start, segments, p, s, rank);
      begin = offsets[s] + rank * rows_per_piece;
      end = offsets[s + 1] < begin + rows_per_piece ? offsets[s + 1] : begin + rows_per_piece;
    }
    GR::run(values, cols, begin, end, p < total_pieces, sh, [&](int64_t c, typename GR::Acc acc, int64_t a) {
      piece_acc[p * cols + c] = acc;
      piece_arg[p * cols + c] = a;
    });
  }
}

template <class T, ReduceOp Op, bool kArg>
__global__ void segment_reduce_merge_pieces_kernel(const int64_t* __restrict__ offsets,
                                                   const int64_t* __restrict__ piece_start, int64_t segments,
                                                   int64_t cols,
                                                   const typename Reducer<Op, T>::Acc* __restrict__ piece_acc,
                                                   const int64_t* __restrict__ piece_arg, T* __restrict__ out,
                                                   int64_t* __restrict__ arg_out) {
  using R = Reducer<Op, T>;
  for (int64_t i = detail::grid_thread_index(); i < segments * cols; i += detail::grid_thread_count()) {
    const int64_t s = i / cols;
    const int64_t c = i % cols;
    const int64_t first = piece_start[s];
    const int64_t last = piece_start[s + 1];
    if (first == last) continue;  // reduced whole by the short kernel
    typename R::Acc acc = piece_acc[first * cols + c];
    int64_t a = piece_arg[first * cols + c];
    for (int64_t p = first + 1; p < last; ++p) {
      R::template combine<kArg>(acc, a, piece_acc[p * cols + c], piece_arg[p * cols + c]);
    }
    out[i] = R::finalize(acc, offsets[s + 1] - offsets[s]);
    if constexpr (kArg) arg_out[i] = a;
  }
}

__global__ void segment_piece_count_kernel(const int64_t* __restrict__ offsets, int64_t segments,
                                           int64_t rows_per_piece, int64_t* __restrict__ counts) {
  for (int64_t s = detail::grid_thread_index(); s <= segments; s += detail::grid_thread_count()) {
    counts[s] = s < segments ? piece_count(offsets[s + 1] - offsets[s], rows_per_piece) : 0;
  }
}

template <class T, ReduceOp Op, bool kArg, int G, int V>
void launch(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
            MatrixView<int64_t> arg, Context& ctx) {
  using Acc = typename Reducer<Op, T>::Acc;
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t S = out.rows;
  const int64_t M = values.rows;
  const int64_t C = values.cols;
  const int64_t rows_per_piece = std::max<int64_t>(piece_rows(C, kGpuPieceElements), 4 * G);
  constexpr int64_t kGroups = kThreads / G;

  // Scratch: piece counts -> exclusive scan, CUB temp, partials. A long segment has
  // more than rows_per_piece rows, so there are at most 2 M / rows_per_piece pieces.
  const int64_t max_pieces = 2 * (M / rows_per_piece) + 1;
  size_t cub_bytes = 0;
  EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, static_cast<int64_t*>(nullptr),
                                              static_cast<int64_t*>(nullptr), S + 1, stream));
  ScratchLayout layout;
  const size_t counts_at = layout.add<int64_t>(S + 1);
  const size_t start_at = layout.add<int64_t>(S + 1);
  const size_t cub_at = layout.add<std::byte>(static_cast<int64_t>(cub_bytes));
  const size_t acc_at = layout.add<Acc>(max_pieces * C);
  const size_t arg_at = layout.add<int64_t>(max_pieces * C);
  void* base = ctx.scratch(layout.bytes());
  int64_t* d_counts = ScratchLayout::at<int64_t>(base, counts_at);
  int64_t* d_piece_start = ScratchLayout::at<int64_t>(base, start_at);

  segment_piece_count_kernel<<<detail::grid_size(S + 1, kThreads), kThreads, 0, stream>>>(
      offsets.data, S, rows_per_piece, d_counts);
  EW_CUDA_CHECK_LAUNCH(stream);
  EW_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ScratchLayout::at<std::byte>(base, cub_at), cub_bytes, d_counts,
                                              d_piece_start, S + 1, stream));

  segment_reduce_short_kernel<T, Op, kArg, G, V>
      <<<detail::grid_size(S, kGroups), kThreads, 0, stream>>>(values.data, offsets.data, S, C, rows_per_piece,
                                                               out.data, arg.data);
  EW_CUDA_CHECK_LAUNCH(stream);

  int64_t h_total_pieces = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_total_pieces, d_piece_start + S, sizeof(int64_t), cudaMemcpyDeviceToHost,
                                stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (h_total_pieces == 0) return;

  Acc* d_piece_acc = ScratchLayout::at<Acc>(base, acc_at);
  int64_t* d_piece_arg = ScratchLayout::at<int64_t>(base, arg_at);
  segment_reduce_piece_kernel<T, Op, kArg, G, V>
      <<<detail::grid_size(h_total_pieces, kGroups), kThreads, 0, stream>>>(
          values.data, offsets.data, d_piece_start, S, h_total_pieces, C, rows_per_piece, d_piece_acc,
          d_piece_arg);
  EW_CUDA_CHECK_LAUNCH(stream);
  segment_reduce_merge_pieces_kernel<T, Op, kArg><<<detail::grid_size(S * C, kThreads), kThreads, 0, stream>>>(
      offsets.data, d_piece_start, S, C, d_piece_acc, d_piece_arg, out.data, arg.data);
  EW_CUDA_CHECK_LAUNCH(stream);
}

// Lanes per segment from the mean work (column vectors x rows) per segment.
template <class T, ReduceOp Op, bool kArg, int V>
void launch_vector(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
                   MatrixView<int64_t> arg, Context& ctx) {
  const int64_t units = values.cols / V;
  const int64_t mean_work = values.rows / std::max<int64_t>(out.rows, 1) * units;
  if (mean_work <= 2) return launch<T, Op, kArg, 1, V>(values, offsets, out, arg, ctx);
  if (mean_work <= 16) return launch<T, Op, kArg, 8, V>(values, offsets, out, arg, ctx);
  if (mean_work <= 1024) return launch<T, Op, kArg, 32, V>(values, offsets, out, arg, ctx);
  return launch<T, Op, kArg, 128, V>(values, offsets, out, arg, ctx);
}

template <class T, ReduceOp Op, bool kArg>
void launch_op(MatrixView<const T> values, VectorView<const int64_t> offsets, MatrixView<T> out,
               MatrixView<int64_t> arg, Context& ctx) {
  const bool aligned16 = reinterpret_cast<uintptr_t>(values.data) % 16 == 0;
  // 16-byte loads: four 4-byte elements or two doubles per lane when rows allow.
  constexpr int kVector = 16 / static_cast<int>(sizeof(T));
  if (values.cols % kVector == 0 && aligned16) {
    launch_vector<T, Op, kArg, kVector>(values, offsets, out, arg, ctx);
  } else {
    launch_vector<T, Op, kArg, 1>(values, offsets, out, arg, ctx);
  }
}

}  // namespace

template <class T>
void segment_reduce_cuda(MatrixView<const T> values, VectorView<const int64_t> offsets, ReduceOp op,
                         MatrixView<T> out, MatrixView<int64_t> arg, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  const bool with_arg = arg.present();
  switch (op) {
    case ReduceOp::Sum: return launch_op<T, ReduceOp::Sum, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Mean: return launch_op<T, ReduceOp::Mean, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Min:
      return with_arg ? launch_op<T, ReduceOp::Min, true>(values, offsets, out, arg, ctx)
                      : launch_op<T, ReduceOp::Min, false>(values, offsets, out, arg, ctx);
    case ReduceOp::Max:
      return with_arg ? launch_op<T, ReduceOp::Max, true>(values, offsets, out, arg, ctx)
                      : launch_op<T, ReduceOp::Max, false>(values, offsets, out, arg, ctx);
  }
}

template void segment_reduce_cuda<float>(MatrixView<const float>, VectorView<const int64_t>, ReduceOp,
                                         MatrixView<float>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<double>(MatrixView<const double>, VectorView<const int64_t>, ReduceOp,
                                          MatrixView<double>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<int32_t>(MatrixView<const int32_t>, VectorView<const int64_t>, ReduceOp,
                                           MatrixView<int32_t>, MatrixView<int64_t>, Context&);
template void segment_reduce_cuda<uint32_t>(MatrixView<const uint32_t>, VectorView<const int64_t>, ReduceOp,
                                            MatrixView<uint32_t>, MatrixView<int64_t>, Context&);

}  // namespace edgewise::segment_reduce_detail
