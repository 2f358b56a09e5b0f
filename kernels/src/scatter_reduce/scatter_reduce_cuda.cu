// scatter_reduce CUDA driver: one atomic per element, then (all but sum) a
// finalize kernel over the outputs. The op's trait (Reducer::kScatter) picks the
// atomic: Add, PackedExtremum or a CasLoop applying the op's accumulate.
//
// One thread per element (row r = i / C, column c = i % C): loads and atomics of
// a warp then touch consecutive columns. What each element contributes is the
// shared slot_update of scatter_reduce_core.hpp, so the CPU tests exercise it.
//  - CasLoop ops (e.g. mul): slots of Reducer's Acc start at identity(); an
//    atomicCAS loop folds each element; the finalize kernel writes out.
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
//  - Moments ops (var, std): two passes of atomicAdd, count + sum, then the
//    residuals and squared deviations about that mean (scatter_moments_cuda.cuh);
//    a finalize kernel builds each Welford accumulator and applies the trait.
// Index arithmetic is 64-bit throughout; zero-size launches are skipped.
#include <cuda_runtime.h>

#include <type_traits>

#include "common/cuda_check.hpp"
#include "edgewise/kernels/cuda/launch.cuh"
#include "edgewise/kernels/common/buffer.hpp"
#include "scatter_reduce/scatter_reduce_backends.hpp"
#include "scatter_reduce/scatter_moments_cuda.cuh"
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

// An atomicCAS loop that folds v into *p with the op's accumulate (CasLoop ops).
template <ReduceOp Op, class T, class Acc>
__device__ __forceinline__ void atomic_fold(Acc* p, T v) {
  static_assert(sizeof(Acc) == 4 || sizeof(Acc) == 8, "atomic_fold: 32- or 64-bit accumulators");
  using Bits = std::conditional_t<sizeof(Acc) == 4, unsigned int, unsigned long long>;
  Bits* word = reinterpret_cast<Bits*>(p);
  Bits old = *word;
  Bits assumed;
  do {
    assumed = old;
    Acc acc;
    memcpy(&acc, &assumed, sizeof(Acc));
    Reducer<Op, T>::accumulate(acc, v);
    Bits next;
    memcpy(&next, &acc, sizeof(Acc));
    old = atomicCAS(word, assumed, next);
  } while (old != assumed);
}

// slots[index[r] * C + c] (+)= values[r, c]: atomicAdd for Add ops (Acc == T for sum
// into out, by the wrap argument above), an atomicCAS loop for CasLoop ops; counts
// per output row when given.
template <ReduceOp Op, class T, class I, class Acc>
__global__ void __launch_bounds__(kThreads)
    scatter_fold_kernel(const T* __restrict__ values, const I* __restrict__ index, int64_t total, int64_t cols,
                        Acc* __restrict__ slots, unsigned long long* __restrict__ counts) {
  for (int64_t i = detail::grid_thread_index(); i < total; i += detail::grid_thread_count()) {
    const int64_t r = i / cols;
    const int64_t c = i - r * cols;
    const int64_t s = static_cast<int64_t>(index[r]);
    if constexpr (Reducer<Op, T>::kScatter == ScatterKind::Add) {
      atomic_add(slots + s * cols + c, static_cast<Acc>(slot_update<Op>(values[i], r)));
    } else {
      static_assert(Reducer<Op, T>::kScatter == ScatterKind::CasLoop, "scatter_fold_kernel: Add or CasLoop");
      atomic_fold<Op>(slots + s * cols + c, values[i]);
    }
    if (counts != nullptr && c == 0) atomicAdd(counts + s, 1ull);
  }
}

// Every slot starts as the op's identity.
template <ReduceOp Op, class T>
__global__ void __launch_bounds__(kThreads)
    scatter_fill_identity_kernel(Slot<Op, T>* __restrict__ slots, int64_t n) {
  for (int64_t i = detail::grid_thread_index(); i < n; i += detail::grid_thread_count()) {
    slots[i] = Reducer<Op, T>::identity();
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

// Add ops whose finalize is a plain (wrapping) cast: atomicAdd straight into out.
template <ReduceOp Op, class T, class I>
void launch_add_into_out(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out,
                         cudaStream_t stream) {
  const int64_t total = values.size();
  EW_CUDA_CHECK(cudaMemsetAsync(out.data, 0, static_cast<size_t>(out.size()) * sizeof(T), stream));
  if (total == 0) return;
  scatter_fold_kernel<Op, T, I, T><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
      values.data, index.data, total, values.cols, out.data, nullptr);
  EW_CUDA_CHECK_LAUNCH(stream);
}

// Every other accumulator op: slots of Reducer's Acc filled with its identity,
// folded by atomics (+ row counts when finalize needs them), then finalized.
template <ReduceOp Op, class T, class I>
void launch_slots(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, Context& ctx,
                  cudaStream_t stream) {
  using Acc = Slot<Op, T>;
  constexpr bool kCount = Reducer<Op, T>::kFinalizeUsesCount;
  const int64_t total = values.size();
  const int64_t outputs = out.size();
  ScratchLayout layout;
  const size_t acc_at = layout.add<Acc>(outputs);
  const size_t counts_at = layout.add<unsigned long long>(kCount ? out.rows : 0);
  void* base = ctx.scratch(layout.bytes());
  Acc* d_acc = ScratchLayout::at<Acc>(base, acc_at);
  auto* d_counts = kCount ? ScratchLayout::at<unsigned long long>(base, counts_at) : nullptr;
  scatter_fill_identity_kernel<Op, T><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(d_acc, outputs);
  EW_CUDA_CHECK_LAUNCH(stream);
  if (kCount) {
    EW_CUDA_CHECK(cudaMemsetAsync(d_counts, 0, static_cast<size_t>(out.rows) * sizeof(unsigned long long), stream));
  }
  if (total > 0) {
    scatter_fold_kernel<Op, T, I, Acc><<<detail::grid_size(total, kThreads), kThreads, 0, stream>>>(
        values.data, index.data, total, values.cols, d_acc, d_counts);
    EW_CUDA_CHECK_LAUNCH(stream);
  }
  scatter_finalize_kernel<Op, T><<<detail::grid_size(outputs, kThreads), kThreads, 0, stream>>>(
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
    // Every word starts as kPackedEmpty (0).
    EW_CUDA_CHECK(cudaMemsetAsync(d_words, 0, static_cast<size_t>(outputs) * sizeof(uint64_t), stream));
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

// Moments ops: the accumulator of each output from its two-pass moments.
template <ReduceOp Op, class T, class F>
__global__ void __launch_bounds__(kThreads)
    scatter_moments_finalize_kernel(scatter_moments_detail::ScatterMoments<F> moments, int64_t outputs, int64_t cols,
                                    T* __restrict__ out) {
  using R = Reducer<Op, T>;
  for (int64_t i = detail::grid_thread_index(); i < outputs; i += detail::grid_thread_count()) {
    F n, mean, m2;
    scatter_moments_detail::moments_of(moments, i, cols, n, mean, m2);
    out[i] = R::finalize(R::from_moments(n, mean, m2), static_cast<int64_t>(n));
  }
}

template <ReduceOp Op, class T, class I>
void launch_moments(MatrixView<const T> values, VectorView<const I> index, MatrixView<T> out, Context& ctx,
                    cudaStream_t stream) {
  using F = typename Reducer<Op, T>::F;
  scatter_moments_detail::ScatterMoments<F> moments;
  moments.compute(values.data, index.data, values.rows, out.rows, values.cols, true, ctx, stream);
  scatter_moments_finalize_kernel<Op, T, F><<<detail::grid_size(out.size(), kThreads), kThreads, 0, stream>>>(
      moments, out.size(), values.cols, out.data);
  EW_CUDA_CHECK_LAUNCH(stream);
}

}  // namespace

template <class T, class I>
void scatter_reduce_cuda(MatrixView<const T> values, VectorView<const I> index, ReduceOp op, MatrixView<T> out,
                         MatrixView<int64_t> arg, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  visit_reduce_op(op, [&](auto tag) {
    constexpr ReduceOp Op = decltype(tag)::value;
    using R = Reducer<Op, T>;
    // Sum straight into out where the accumulator's sum, cast to T, is what an
    // atomicAdd on T gives: T itself, or an integer wrapping the same way. The
    // 16-bit floats accumulate in float slots and round once in the finalize.
    constexpr bool kAddIntoOut = std::is_same_v<typename R::Acc, T> || std::is_integral_v<T>;
    if constexpr (!kDefinedFor<Op, T>) {
      return;  // scatter_reduce.cpp rejected it
    } else if constexpr (R::kScatter == ScatterKind::PackedExtremum) {
      launch_extremum<Op>(values, index, out, arg, ctx, stream);
    } else if constexpr (R::kScatter == ScatterKind::Moments) {
      launch_moments<Op>(values, index, out, ctx, stream);
    } else if constexpr (R::kScatter == ScatterKind::Add && !R::kFinalizeUsesCount && kAddIntoOut) {
      launch_add_into_out<Op>(values, index, out, stream);
    } else {
      launch_slots<Op>(values, index, out, ctx, stream);
    }
  });
}

namespace {
// out [cols, rows] = in [rows, cols] transposed; one thread per output element, so the
// writes coalesce.
template <class T>
__global__ void __launch_bounds__(kThreads)
    transpose_kernel(const T* __restrict__ in, int64_t rows, int64_t cols, T* __restrict__ out) {
  for (int64_t i = detail::grid_thread_index(); i < rows * cols; i += detail::grid_thread_count()) {
    out[i] = in[(i % rows) * cols + i / rows];
  }
}

template <class T>
void transpose(const T* in, int64_t rows, int64_t cols, T* out, cudaStream_t stream) {
  if (rows * cols == 0) return;
  transpose_kernel<T><<<detail::grid_size(rows * cols, kThreads), kThreads, 0, stream>>>(in, rows, cols, out);
  EW_CUDA_CHECK_LAUNCH(stream);
}
}  // namespace

template <class T, class I>
void scatter_reduce_transposed_cuda(MatrixView<const T> values_t, VectorView<const I> index, ReduceOp op,
                                    MatrixView<T> out_t, MatrixView<int64_t> arg_t, Context& ctx) {
  EW_CUDA_CHECK(cudaSetDevice(ctx.device().index));
  cudaStream_t stream = detail::as_stream(ctx.stream());
  const int64_t C = values_t.rows, M = values_t.cols, S = out_t.cols;
  const Device device = ctx.device();
  Buffer<T> values(M * C, device), out(S * C, device);
  Buffer<int64_t> arg(arg_t.present() ? S * C : 0, device);
  transpose(values_t.data, C, M, values.data(), stream);
  scatter_reduce_cuda<T, I>(MatrixView<const T>(values.data(), M, C, device), index, op,
                            MatrixView<T>(out.data(), S, C, device),
                            arg_t.present() ? MatrixView<int64_t>(arg.data(), S, C, device) : MatrixView<int64_t>{},
                            ctx);
  transpose(static_cast<const T*>(out.data()), S, C, out_t.data, stream);
  if (arg_t.present()) transpose(static_cast<const int64_t*>(arg.data()), S, C, arg_t.data, stream);
  // The buffers are freed on return: wait for the kernels that use them.
  EW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define EW_INSTANTIATE_INDEX(T, I)                                                                             \
  template void scatter_reduce_cuda<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp, MatrixView<T>, \
                                          MatrixView<int64_t>, Context&);                                    \
  template void scatter_reduce_transposed_cuda<T, I>(MatrixView<const T>, VectorView<const I>, ReduceOp,     \
                                                     MatrixView<T>, MatrixView<int64_t>, Context&);
#define EW_INSTANTIATE(T) EW_INSTANTIATE_INDEX(T, int32_t) EW_INSTANTIATE_INDEX(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE_INDEX
#undef EW_INSTANTIATE

}  // namespace edgewise::scatter_reduce_detail
