// gather_rows: validation, then dispatch to the CPU or CUDA driver on raw words.
#include "edgewise/kernels/gather_rows.hpp"

#include "common/cuda_backend.hpp"
#include "common/index_range.hpp"
#include "common/validate.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "gather_rows/gather_rows_backends.hpp"

namespace edgewise {

namespace {
constexpr const char* kCsr = "gather_rows_csr";
constexpr const char* kCoo = "gather_rows_coo";

// The checks both entry points share: batches, values [A * S, C], out [A * R, C] and
// the per-batch index rows `rows` ([1 or A, ...]); returns S (values rows per batch).
template <class T>
int64_t check_common(const char* op, MatrixView<const T> values, MatrixView<T> out, int64_t batches,
                     int64_t index_rows, const char* index_name, Context& ctx) {
  using detail::require_device;
  EW_REQUIRE(batches >= 0, op, ": batches (", batches, ") must not be negative");
  EW_REQUIRE(values.rows >= 0 && values.cols >= 1, op, ": values must be [A * S, C] with C >= 1 (got [",
             values.rows, ", ", values.cols, "])");
  EW_REQUIRE(values.data != nullptr || values.size() == 0, op, ": values is null but has ", values.size(),
             " elements");
  EW_REQUIRE(out.cols == values.cols, op, ": out.cols() (", out.cols, ") must equal values.cols() (", values.cols,
             ")");
  EW_REQUIRE(out.data != nullptr || out.size() == 0, op, ": out is null but has ", out.size(), " elements");
  EW_REQUIRE(index_rows == 1 || index_rows == batches, op, ": ", index_name, ".rows() (", index_rows,
             ") must be 1 (shared by every batch) or batches (", batches, ")");
  const int64_t S = batches > 0 ? values.rows / batches : 0;
  EW_REQUIRE(S * batches == values.rows, op, ": values.rows() (", values.rows, ") must be a multiple of batches (",
             batches, ")");
  require_device(op, "values", values.device, ctx);
  require_device(op, "out", out.device, ctx);
  return S;
}

// First row-major position of offsets [rows, S + 1] outside the contract, or -1.
int64_t first_bad_offset_cpu(MatrixView<const int64_t> offsets, int64_t M) {
  for (int64_t i = 0; i < offsets.rows; ++i) {
    for (int64_t s = 0; s < offsets.cols; ++s) {
      if (!gather_rows_detail::offset_ok(offsets.row(i), s, M)) return i * offsets.cols + s;
    }
  }
  return -1;
}

void validate_offsets(MatrixView<const int64_t> offsets, int64_t M, Context& ctx) {
  int64_t bad = -1;
  if (offsets.device.is_cpu()) {
    bad = first_bad_offset_cpu(offsets, M);
  } else {
#if EDGEWISE_WITH_CUDA
    bad = gather_rows_detail::first_bad_offset_cuda(offsets.data, offsets.rows, offsets.cols - 1, M, ctx);
#else
    detail::throw_built_without_cuda(kCsr);
#endif
  }
  if (bad < 0) return;
  const int64_t i = bad / offsets.cols, s = bad % offsets.cols;
  constexpr const char* kWhy = " (each row of offsets nondecreasing, within the output's rows per batch)";
  int64_t value = 0;
  copy_bytes(&value, Device::cpu(), offsets.data + bad, offsets.device, sizeof(value), ctx.stream());
  EW_REQUIRE(s > 0, kCsr, ": offsets[", i, ", 0] (", value, ") must lie in [0, ", M, "]", kWhy);
  int64_t previous = 0;
  copy_bytes(&previous, Device::cpu(), offsets.data + bad - 1, offsets.device, sizeof(previous), ctx.stream());
  detail::throw_invalid_argument(kCsr, ": offsets[", i, ", ", s, "] (", value, ") must lie in [offsets[", i, ", ",
                                 s - 1, "] (", previous, "), ", M, "]", kWhy);
}
}  // namespace

template <class T>
void gather_rows_csr(MatrixView<const T> values, MatrixView<const int64_t> offsets, MatrixView<T> out,
                     int64_t batches, Context& ctx) {
  EW_REQUIRE(offsets.cols >= 1, kCsr, ": offsets must be [Ao, S + 1] (got [", offsets.rows, ", ", offsets.cols,
             "])");
  EW_REQUIRE(offsets.data != nullptr || offsets.size() == 0, kCsr, ": offsets is null but has ", offsets.size(),
             " elements");
  const int64_t S = check_common(kCsr, values, out, batches, offsets.rows, "offsets", ctx);
  EW_REQUIRE(batches == 0 || S == offsets.cols - 1, kCsr, ": values.rows() (", values.rows, ") must be batches (",
             batches, ") times offsets.cols() - 1 (", offsets.cols - 1, ")");
  const int64_t M = batches > 0 ? out.rows / batches : 0;
  EW_REQUIRE(M * batches == out.rows, kCsr, ": out.rows() (", out.rows, ") must be a multiple of batches (",
             batches, ")");
  detail::require_device(kCsr, "offsets", offsets.device, ctx);
  if (ctx.validate) {
    using detail::named;
    detail::require_outputs_disjoint(kCsr, {named("out", out)}, {named("values", values), named("offsets", offsets)});
    if (batches > 0) validate_offsets(offsets, M, ctx);
  }
  if (out.size() == 0) return;
  using W = gather_rows_detail::WordFor<T>;
  const gather_rows_detail::CsrSpread<W> p{reinterpret_cast<const W*>(values.data), offsets.data,
                                           reinterpret_cast<W*>(out.data),           batches,
                                           S,                                        M,
                                           values.cols,                              offsets.rows == 1 ? 0 : S + 1};
  if (ctx.device().is_cpu()) {
    gather_rows_detail::gather_rows_csr_cpu(p);
  } else {
#if EDGEWISE_WITH_CUDA
    gather_rows_detail::gather_rows_csr_cuda(p, ctx);
#else
    detail::throw_built_without_cuda(kCsr);
#endif
  }
}

template <class T, class I>
void gather_rows_coo(MatrixView<const T> values, MatrixView<const I> index, MatrixView<T> out, int64_t batches,
                     Context& ctx) {
  EW_REQUIRE(index.rows >= 0 && index.cols >= 0 && (index.data != nullptr || index.size() == 0), kCoo,
             ": index is null but has ", index.size(), " elements");
  const int64_t S = check_common(kCoo, values, out, batches, index.rows, "index", ctx);
  const int64_t E = index.cols;
  EW_REQUIRE(out.rows == batches * E, kCoo, ": out.rows() (", out.rows, ") must equal batches (", batches,
             ") times index.cols() (", E, ")");
  detail::require_device(kCoo, "index", index.device, ctx);
  // Into a fresh output the CPU copy checks each index as it reads it: the separate
  // pass over the index cost a fifth of a narrow gather's time.
  const bool check_while_copying = ctx.validate && ctx.outputs_fresh && ctx.device().is_cpu();
  if (ctx.validate) {
    using detail::named;
    detail::require_outputs_disjoint(kCoo, {named("out", out)}, {named("values", values), named("index", index)});
    if (batches > 0 && !(check_while_copying && out.size() > 0)) {
      detail::validate_index_range(kCoo, "index", index.flat(), S, "the rows of values per batch", ctx);
    }
  }
  if (out.size() == 0) return;
  using W = gather_rows_detail::WordFor<T>;
  const gather_rows_detail::CooPick<W, I> p{reinterpret_cast<const W*>(values.data),
                                            index.data,
                                            reinterpret_cast<W*>(out.data),
                                            batches,
                                            S,
                                            E,
                                            values.cols,
                                            index.rows == 1 ? 0 : E,
                                            check_while_copying};
  if (ctx.device().is_cpu()) {
    const int64_t bad = gather_rows_detail::gather_rows_coo_cpu(p);
    if (bad >= 0) {
      detail::throw_index_out_of_range(kCoo, "index", bad, static_cast<int64_t>(index.data[bad]), S,
                                       "the rows of values per batch");
    }
  } else {
#if EDGEWISE_WITH_CUDA
    gather_rows_detail::gather_rows_coo_cuda(p, ctx);
#else
    detail::throw_built_without_cuda(kCoo);
#endif
  }
}

template <class T>
void gather_rows_csr(MatrixView<const T> values, MatrixView<const int64_t> offsets, MatrixView<T> out,
                     int64_t batches) {
  gather_rows_csr(values, offsets, out, batches, default_context(values.device));
}

template <class T, class I>
void gather_rows_coo(MatrixView<const T> values, MatrixView<const I> index, MatrixView<T> out, int64_t batches) {
  gather_rows_coo(values, index, out, batches, default_context(values.device));
}

#define EW_INSTANTIATE_COO(T, I)                                                                                 \
  template void gather_rows_coo<T, I>(MatrixView<const T>, MatrixView<const I>, MatrixView<T>, int64_t, Context&); \
  template void gather_rows_coo<T, I>(MatrixView<const T>, MatrixView<const I>, MatrixView<T>, int64_t);
#define EW_INSTANTIATE(T)                                                                                        \
  template void gather_rows_csr<T>(MatrixView<const T>, MatrixView<const int64_t>, MatrixView<T>, int64_t,       \
                                   Context&);                                                                   \
  template void gather_rows_csr<T>(MatrixView<const T>, MatrixView<const int64_t>, MatrixView<T>, int64_t);      \
  EW_INSTANTIATE_COO(T, int32_t)                                                                                 \
  EW_INSTANTIATE_COO(T, int64_t)
EW_REDUCE_ELEMENT_TYPES(EW_INSTANTIATE)
#undef EW_INSTANTIATE
#undef EW_INSTANTIATE_COO

}  // namespace edgewise
