// scatter_reduce CUDA driver: one atomic per element, then (mean, min, max) a
// finalize kernel over the outputs.
//
// One thread per element (row r = i / C, column c = i % C): loads and atomics of
// a warp then touch consecutive columns. What each element contributes is the
// shared slot_update of scatter_reduce_core.hpp, so the CPU tests exercise it.
//  - sum: atomicAdd straight into out (zeroed first). For int32 a 32-bit
//    atomicAdd wraps modulo 2^32, which is exactly the output of Reducer's int64
//    sum (uint32 likewise); float sums depend on arrival order.
//  - mean: atomicAdd into a scratch accumulator of Reducer's type (float, or a
//    64-bit integer, since an integer mean needs the full sum) plus a per-output
//    row count; the finalize kernel divides with Reducer::finalize.
//  - min/max: atomicMax on the 64-bit packed word (key << 32) | ~row of
//    common/monotone.hpp resolves value, NaN and tie (lower row) at once; the
//    finalize kernel writes the winning row's value, read back from values, and
//    the row. Hence the M <= 2^32 - 1 limit checked by scatter_reduce.cpp.
//  - double min/max: the 64-bit key leaves no room for the row, so two lock-free
//    passes: atomicMax of extremum_key per output, then, over the elements whose
//    key equals the winner (extremum_row_candidate), atomicMin of the row. The
//    winner is the one a fold in row order picks (the best value, ties and NaNs
//    to the lower row), so results match the CPU bit for bit. Both passes read
//    the values; a CAS loop on a 128-bit (key, row) pair was the alternative.
//  - double sum/mean: atomicAdd(double*), native on sm_60+.
// Index arithmetic is 64-bit throughout; zero-size launches are skipped.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "common/launch.cuh"
#include "scatter_reduce/scatter_reduce_backends.hpp"
#include "scatter_reduce/scatter_reduce_core.hpp"

namespace edgewise::scatter_reduce_detail {

namespace {

constexpr int kThreads = 256;

// atomicAdd for every slot type (64-bit integers through unsigned long long:
// two's-complement addition modulo 2^64 is the same for signed values).
__device__ __forceinline__ void atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t* p, int32_t v) {
  atomicAdd(reinterpret_cast<int*>(p), static_cast<int>(v));
}
__device__ __forceinline__ void atomic_add(uint32_t* p, uint32_t v) {
  atomicAdd(reinterpret_cast<unsigned int*>(p), static_cast<unsigned int>(v));
}
__device__ __forceinline__ void atomic_add(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
__device__ __forceinline__ void atomic_add(uint64_t* p, uint64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// Sum (Acc == T after the wrap argument above) or mean (Acc = Reducer's type,
// with counts): slots[index[r] * C + c] += values[r, c].
template <ReduceOp Op, class T, class I, class Acc>
__global__ void __launch_bounds__(kThreads)
    scatter_add_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total, int64_t cols,
                       Acc* __restrict__ slots, unsigned long long* __restrict__ counts) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const int64_t s = static_cast<int64_t>(index[r]);
    atomic_add(slots + s * cols + c, static_cast<Acc>(slot_update<Op>(values[i], r)));
    if (counts != nullptr && c == 0) atomicAdd(counts + s, 1ull);
  }
}

// Min/max: words[index[r] * C + c] = max(word, packed word of (values[r, c], r)).
template <ReduceOp Op, class T, class I>
__global__ void __launch_bounds__(kThreads)
    scatter_extremum_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total, int64_t cols,
                            unsigned long long* __restrict__ words) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t s = static_cast<int64_t>(index[r]);
    atomicMax(words + s * cols + (i - r * cols), static_cast<unsigned long long>(slot_update<Op>(values[i], r)));
  }
}

// double min/max, pass 1: keys[index[r] * C + c] = max(key, extremum_key(values[r, c])).
template <ReduceOp Op, class T, class I>
__global__ void __launch_bounds__(kThreads)
    scatter_extremum_key_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total,
                                int64_t cols, unsigned long long* __restrict__ keys) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t s = static_cast<int64_t>(index[r]);
    atomicMax(keys + s * cols + (i - r * cols), static_cast<unsigned long long>(extremum_key<Op>(values[i])));
  }
}

// double min/max, pass 2: rows[o] = min(row) over the elements holding keys[o].
template <ReduceOp Op, class T, class I>
__global__ void __launch_bounds__(kThreads)
    scatter_extremum_row_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total,
                                int64_t cols, const unsigned long long* __restrict__ keys,
                                unsigned long long* __restrict__ rows) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t o = static_cast<int64_t>(index[r]) * cols + (i - r * cols);
    if (extremum_row_candidate<Op>(values[i], static_cast<MonotoneKey<T>>(keys[o]))) {
      atomicMin(rows + o, static_cast<unsigned long long>(r));
    }
  }
}

// double min/max: writes every output element from its key and row (~0: no row came).
template <ReduceOp Op, class T>
__global__ void __launch_bounds__(kThreads)
    scatter_extremum_pair_finalize_kernel(const unsigned long long* __restrict__ keys,
                                          const unsigned long long* __restrict__ rows,
                                          const T* __restrict__ values, int64_t outputs, int64_t cols,
                                          T* __restrict__ out, int64_t* __restrict__ arg) {
  for (int64_t i = detail::grid_thread_index(); i < outputs; i += detail::grid_thread_count()) {
    const int64_t row = rows[i] == ~0ull ? -1 : static_cast<int64_t>(rows[i]);
    T value;
    int64_t a;
    extremum_finalize<Op, T>(static_cast<MonotoneKey<T>>(keys[i]), row, values, cols, i % cols, value, a);
    out[i] = value;
    if (arg != nullptr) arg[i] = a;
  }
}

// Writes every output element from its slot (mean: with its row count).
template <ReduceOp Op, class T>
__global__ void __launch_bounds__(kThreads)
    scatter_finalize_kernel(const Slot<Op, T>* __restrict__ slots, const unsigned long long* __restrict__ counts,
                            const T* __restrict__ values, int64_t outputs, int64_t cols, T* __restrict__ out,
                            int64_t* __restrict__ arg) {
  for (int64_t i = detail::grid_thread_index(); i < outputs; i += detail::grid_thread_count()) {
    const int64_t count = counts != nullptr ? static_cast<int64_t>(counts[i / cols]) : 1;
    T value;
    int64_t row;
    slot_finalize<Op, T>(slots[i], count, values, cols, i % cols, value, row);
    out[i] = value;
    if (arg != nullptr) arg[i] = row;
  }
}

template <class I>
__global__ void scatter_first_bad_index_kernel(const I* __restrict__ index, int64_t size, int64_t segments,
                                               unsigned long long* __restrict__ first_bad) {
  for (int64_t i = detail::grid_thread_index(); i < size; i += detail::grid_thread_count()) {
    if (!index_in_range(index[i], segments)) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

template <class T, class I>
void launch_sum(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, cudaStream_t stream) {
  const int64_t total = values.size();
  EW_CUDA_CHECK(cudaMemsetAsync(out.data, 0, static_cast<size_t>(out.size()) * sizeof(T), stream));
  if (total == 0) return;
  scatter_add_kernel<ReduceOp::Sum, T, I, T><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
      values.data, index.data, total, values.cols, out.data, nullptr);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <class T, class I>
void launch_mean(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, Context& ctx,
                 cudaStream_t stream) {
  using Acc = Slot<ReduceOp::Mean, T>;
  const int64_t total = values.size();
  const int64_t outputs = out.size();
  ScratchLayout layout;
  const size_t acc_at = layout.add<Acc>(outputs);
  const size_t counts_at = layout.add<unsigned long long>(out.rows);
  void* base = ctx.scratch(layout.bytes());
  Acc* d_acc = ScratchLayout::at<Acc>(base, acc_at);
  auto* d_counts = ScratchLayout::at<unsigned long long>(base, counts_at);
  EW_CUDA_CHECK(cudaMemsetAsync(base, 0, layout.bytes(), stream));
  if (total > 0) {
    scatter_add_kernel<ReduceOp::Mean, T, I, Acc><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
        values.data, index.data, total, values.cols, d_acc, d_counts);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  scatter_finalize_kernel<ReduceOp::Mean, T><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(
      d_acc, d_counts, values.data, outputs, values.cols, out.data, nullptr);
  EW_CUDA_CHECK_LAUNCH(stream);
}

// double min/max: the two-pass (key, then row) scheme described at the top.
template <ReduceOp Op, class T, class I>
void launch_extremum_pair(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out,
                          MatrixView<int64_t> arg, Context& ctx, cudaStream_t stream) {
  const int64_t total = values.size();
  const int64_t outputs = out.size();
  ScratchLayout layout;
  const size_t keys_at = layout.add<unsigned long long>(outputs);
  const size_t rows_at = layout.add<unsigned long long>(outputs);
  void* base = ctx.scratch(layout.bytes());
  auto* d_keys = ScratchLayout::at<unsigned long long>(base, keys_at);
  auto* d_rows = ScratchLayout::at<unsigned long long>(base, rows_at);
  // Key 0 is below every double's key (extremum_key never gives 0 for a double).
  EW_CUDA_CHECK(cudaMemsetAsync(d_keys, 0, static_cast<size_t>(outputs) * sizeof(unsigned long long), stream));
  EW_CUDA_CHECK(cudaMemsetAsync(d_rows, 0xFF, static_cast<size_t>(outputs) * sizeof(unsigned long long), stream));
  if (total > 0) {
    scatter_extremum_key_kernel<Op, T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
        values.data, index.data, total, values.cols, d_keys);
    EW_CUDA_CHECK_LAUNCH(stream);
    scatter_extremum_row_kernel<Op, T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
        values.data, index.data, total, values.cols, d_keys, d_rows);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  scatter_extremum_pair_finalize_kernel<Op, T><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(
      d_keys, d_rows, values.data, outputs, values.cols, out.data, arg.present() ? arg.data : nullptr);
  EW_CUDA_CHECK_LAUNCH(stream);
}

template <ReduceOp Op, class T, class I>
void launch_extremum(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out,
                     MatrixView<int64_t> arg, Context& ctx, cudaStream_t stream) {
  if constexpr (sizeof(MonotoneKey<T>) == 8) {
    return launch_extremum_pair<Op>(values, index, out, arg, ctx, stream);
  } else {
    const int64_t total = values.size();
    const int64_t outputs = out.size();
    auto* d_words = static_cast<unsigned long long*>(ctx.scratch(static_cast<size_t>(outputs) * sizeof(uint64_t)));
    EW_CUDA_CHECK(cudaMemsetAsync(d_words, 0, static_cast<size_t>(outputs) * sizeof(uint64_t), stream));  // kPackedEmpty
    if (total > 0) {
      scatter_extremum_kernel<Op, T, I><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
          values.data, index.data, total, values.cols, d_words);
      EW_CUDA_CHECK_LAUNCH(stream);
    }
    scatter_finalize_kernel<Op, T><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(
        reinterpret_cast<const uint64_t*>(d_words), nullptr, values.data, outputs, values.cols, out.data,
        arg.present() ? arg.data : nullptr);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
}

}  // namespace

template <class T, class I>
void scatter_reduce_cuda(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                         MatrixView<int64_t> arg, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  switch (op) {
    case ReduceOp::Sum: return launch_sum(values, index, out, stream);
    case ReduceOp::Mean: return launch_mean(values, index, out, ctx, stream);
    case ReduceOp::Min: return launch_extremum<ReduceOp::Min>(values, index, out, arg, ctx, stream);
    case ReduceOp::Max: return launch_extremum<ReduceOp::Max>(values, index, out, arg, ctx, stream);
  }
}

template <class I>
int64_t first_bad_index_cuda(VectorView<const I> index, int64_t segments, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  auto* d_first_bad = static_cast<unsigned long long*>(ctx.scratch(sizeof(unsigned long long)));
  EW_CUDA_CHECK(cudaMemsetAsync(d_first_bad, 0xFF, sizeof(unsigned long long), stream));
  scatter_first_bad_index_kernel<I><<<detail::grid_size(index.size, kThreads), kThreads, 0, stream>>>(
      index.data, index.size, segments, d_first_bad);
  EW_CUDA_CHECK_LAUNCH(stream);
  unsigned long long h_first_bad = 0;
  EW_CUDA_CHECK(cudaMemcpyAsync(&h_first_bad, d_first_bad, sizeof(h_first_bad), cudaMemcpyDeviceToHost, stream));
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_first_bad == ~0ull ? -1 : static_cast<int64_t>(h_first_bad);
}

#define EW_INSTANTIATE(T, I)                                                                                   \
  template void scatter_reduce_cuda<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                          MatrixView<int64_t>, Context&);
EW_INSTANTIATE(float, int32_t)
EW_INSTANTIATE(float, int64_t)
EW_INSTANTIATE(double, int32_t)
EW_INSTANTIATE(double, int64_t)
EW_INSTANTIATE(int32_t, int32_t)
EW_INSTANTIATE(int32_t, int64_t)
EW_INSTANTIATE(uint32_t, int32_t)
EW_INSTANTIATE(uint32_t, int64_t)
#undef EW_INSTANTIATE
template int64_t first_bad_index_cuda<int32_t>(VectorView<const int32_t>, int64_t, Context&);
template int64_t first_bad_index_cuda<int64_t>(VectorView<const int64_t>, int64_t, Context&);

}  // namespace edgewise::scatter_reduce_detail
