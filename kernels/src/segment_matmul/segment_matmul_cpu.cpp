// The CPU driver of segment_matmul / grouped_matmul: every product is cut into fixed
// blocks (output rows, or, for a long reduction, rows of the reduced dimension) and
// the blocks of all products share one dynamic loop, so a thousand small types cost
// one thread team, not a thousand. Each block is one single-thread Eigen product (or
// register tiles). bfloat16 products run in float: each block widens the rows it
// reads, multiplies and rounds its output once, so every sum is accumulated in float.
// Compiled once per ISA level (kernels/CMakeLists.txt).

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#define EW_CPU_ISA_LEVEL 0
#endif
// Eigen's templates get a namespace of their own per ISA level (and apart from the
// engine's copies, built with other flags), so the linker never merges an AVX-512
// instantiation into the baseline copy.
#define EW_EIGEN_CONCAT_(a, b) a##b
#define EW_EIGEN_CONCAT(a, b) EW_EIGEN_CONCAT_(a, b)
#define Eigen EW_EIGEN_CONCAT(Eigen_kernels_, EW_CPU_ISA_NS)
// The blocks are the parallelism; Eigen must not start threads of its own inside them.
#define EIGEN_DONT_PARALLELIZE
// GCC 12 reports false "may be used uninitialized" inside Eigen's AVX-512 packing.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "edgewise/kernels/cpu/row_tile_gemm.hpp"
#include "segment_matmul/bf16_dot_tiles.hpp"
#include "segment_matmul/segment_matmul_backends.hpp"

namespace edgewise::segment_matmul_detail {
namespace EW_CPU_ISA_NS {

namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMajor<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using Map = Eigen::Map<RowMajor<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

// A block's work in multiply-adds: small enough that T = 1 still splits across the
// threads, large enough that Eigen's packing is amortised and that a type of a few
// hundred rows is one block, reading its weight once (at 2^18, 512 types of ~200 rows
// x 64 x 64 re-read 16 KB weights per 64 rows: 5-10% slower).
constexpr int64_t kBlockWork = int64_t{1} << 20;
constexpr int64_t kMinBlockRows = 16;
constexpr int64_t kMaxBlockRows = 2048;
// A reduction longer than this (a weight gradient's rows) is split into blocks of it.
constexpr int64_t kReduceBlock = 4096;

namespace tiles = edgewise::row_tile_gemm::EW_CPU_ISA_NS;

// A float product with a small right operand and an output width the register tiles
// take runs on them (row_tile_gemm.hpp: no packing, so short blocks stay fast); the
// rest on Eigen.
constexpr int64_t kTiledMaxK = 256;

template <class T>
bool tiled(const Gemm<T>& g) {
  return (std::is_same_v<T, float> || std::is_same_v<T, BFloat16>) && !g.trans_a && g.k <= kTiledMaxK &&
         tiles::is_tiled_width(g.n);
}

// A reduction longer than kReduceBlock with a small output (a weight gradient) is cut
// along the reduction into partial products.
template <class T>
bool split_reduction(const Gemm<T>& g) {
  return g.k > kReduceBlock && g.m * g.n <= kBlockWork;
}

// The type a product of T accumulates in: bfloat16 in float.
template <class T>
struct ComputeOf {
  using type = T;
};
template <>
struct ComputeOf<BFloat16> {
  using type = float;
};
template <class T>
using Compute = typename ComputeOf<T>::type;
template <class T>
inline constexpr bool kWidened = !std::is_same_v<T, Compute<T>>;

// dst [rows, cols], dense = src's rows x cols at row stride `stride`, in float.
void widen(const BFloat16* src, int64_t rows, int64_t cols, int64_t stride, float* dst) {
  for (int64_t r = 0; r < rows; ++r) {
    const BFloat16* in = src + r * stride;
    float* out = dst + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) out[c] = static_cast<float>(in[c]);
  }
}

void narrow(const float* src, int64_t count, BFloat16* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = BFloat16(src[i]);
}

// A per-thread scratch array of at least `size` floats (kept between calls).
float* scratch(std::vector<float>& buffer, int64_t size) {
  if (buffer.size() < static_cast<std::size_t>(size)) buffer.resize(static_cast<std::size_t>(size));
  return buffer.data();
}

// One unit of the shared loop: rows [r0, r1) of gemm g's output, or, with partial >= 0,
// the reduction slice [r0, r1) of g written to partials[partial].
struct Block {
  int64_t gemm;
  int64_t r0;
  int64_t r1;
  int64_t partial;  // -1: writes the output directly
};

// op(a) rows [r0, r1) as a [r1 - r0, k] expression; a stored [m, k] or [k, m].
template <class T>
auto op_a_rows(const Gemm<T>& g, int64_t r0, int64_t r1) {
  return g.trans_a ? ConstMap<T>(g.a + r0, g.k, r1 - r0, Eigen::OuterStride<>(g.m))
                   : ConstMap<T>(g.a + r0 * g.k, r1 - r0, g.k, Eigen::OuterStride<>(g.k));
}

// The reduction slice [k0, k1) of op(a) ([m, k1 - k0], columns) and op(b) (rows).
template <class T>
void product_slice(const Gemm<T>& g, int64_t k0, int64_t k1, T* out) {
  const int64_t kb = k1 - k0;
  Map<T> c(out, g.m, g.n, Eigen::OuterStride<>(g.n));
  const ConstMap<T> a = g.trans_a ? ConstMap<T>(g.a + k0 * g.m, kb, g.m, Eigen::OuterStride<>(g.m))
                                  : ConstMap<T>(g.a + k0, g.m, kb, Eigen::OuterStride<>(g.k));
  const ConstMap<T> b = g.trans_b ? ConstMap<T>(g.b + k0, g.n, kb, Eigen::OuterStride<>(g.k))
                                  : ConstMap<T>(g.b + k0 * g.n, kb, g.n, Eigen::OuterStride<>(g.n));
  if (g.trans_a && g.trans_b) c.noalias() = a.transpose() * b.transpose();
  else if (g.trans_a) c.noalias() = a.transpose() * b;
  else if (g.trans_b) c.noalias() = a * b.transpose();
  else c.noalias() = a * b;
}

// stream_bytes: the call's output size, for tiles::streaming().
template <class T>
void product_rows(const Gemm<T>& g, int64_t r0, int64_t r1, const T* b_untransposed, int64_t stream_bytes) {
  if constexpr (std::is_same_v<T, float>) {
    if (tiled(g)) {
      const bool stream = tiles::streaming(g.c, g.n, false, stream_bytes);
      tiles::rows_any(g.a, r0, r1, g.k, b_untransposed, g.n, g.c, 1.0f, false, stream);
      return;
    }
  }
  Map<T> c(g.c + r0 * g.n, r1 - r0, g.n, Eigen::OuterStride<>(g.n));
  const auto a = op_a_rows(g, r0, r1);
  const ConstMap<T> b = g.trans_b ? ConstMap<T>(g.b, g.n, g.k, Eigen::OuterStride<>(g.k))
                                  : ConstMap<T>(g.b, g.k, g.n, Eigen::OuterStride<>(g.n));
  if (g.trans_a && g.trans_b) c.noalias() = a.transpose() * b.transpose();
  else if (g.trans_a) c.noalias() = a.transpose() * b;
  else if (g.trans_b) c.noalias() = a * b.transpose();
  else c.noalias() = a * b;
}

// Whether a bfloat16 product runs on bf16_dot's tiles (this CPU has the instructions).
bool dot_tiled(const Gemm<BFloat16>& g) {
  return !g.trans_a && bf16_dot::tiled_width(g.n) && !split_reduction(g) && bf16_dot::available();
}

// product_rows of a bfloat16 product: b_float is its right operand already in float,
// stored [k, n] or, when b_trans, [n, k].
void widened_rows(const Gemm<BFloat16>& g, int64_t r0, int64_t r1, const float* b_float, bool b_trans) {
  thread_local std::vector<float> a_buffer, c_buffer;
  const int64_t rows = r1 - r0;
  float* a = scratch(a_buffer, rows * g.k);
  if (g.trans_a) widen(g.a + r0, g.k, rows, g.m, a);  // op(a) rows = a's columns: a [k, rows]
  else widen(g.a + r0 * g.k, rows, g.k, g.k, a);
  float* c = scratch(c_buffer, rows * g.n);
  const Gemm<float> gf{a, b_float, c, rows, g.n, g.k, g.trans_a, b_trans};
  product_rows(gf, 0, rows, b_float, 0);
  narrow(c, rows * g.n, g.c + r0 * g.n);
}

// product_slice of a bfloat16 product, into float partials.
void widened_slice(const Gemm<BFloat16>& g, int64_t k0, int64_t k1, float* out) {
  thread_local std::vector<float> a_buffer, b_buffer;
  const int64_t kb = k1 - k0;
  float* a = scratch(a_buffer, kb * g.m);
  float* b = scratch(b_buffer, kb * g.n);
  if (g.trans_a) widen(g.a + k0 * g.m, kb, g.m, g.m, a);  // [kb, m]
  else widen(g.a + k0, g.m, kb, g.k, a);                  // [m, kb]
  if (g.trans_b) widen(g.b + k0, g.n, kb, g.k, b);        // [n, kb]
  else widen(g.b + k0 * g.n, kb, g.n, g.n, b);            // [kb, n]
  product_slice(Gemm<float>{a, b, out, g.m, g.n, kb, g.trans_a, g.trans_b}, 0, kb, out);
}

}  // namespace

template <class T>
void grouped_gemm_cpu(std::span<const Gemm<T>> gemms) {
  using C = Compute<T>;
  std::vector<Block> blocks;
  std::vector<int64_t> partial_gemm;  // partials[p] belongs to gemm partial_gemm[p]
  int64_t output_bytes = 0;
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const Gemm<T>& g = gemms[i];
    const auto gi = static_cast<int64_t>(i);
    output_bytes += g.m * g.n * static_cast<int64_t>(sizeof(T));
    if (g.m == 0 || g.n == 0) continue;
    if (g.k == 0) {
      std::fill(g.c, g.c + g.m * g.n, T(0));
      continue;
    }
    if (split_reduction(g)) {
      for (int64_t k0 = 0; k0 < g.k; k0 += kReduceBlock) {
        blocks.push_back({gi, k0, std::min(g.k, k0 + kReduceBlock), static_cast<int64_t>(partial_gemm.size())});
        partial_gemm.push_back(gi);
      }
      continue;
    }
    const int64_t rows = std::clamp(kBlockWork / std::max<int64_t>(1, g.k * g.n), kMinBlockRows, kMaxBlockRows);
    for (int64_t r0 = 0; r0 < g.m; r0 += rows) blocks.push_back({gi, r0, std::min(g.m, r0 + rows), -1});
  }
  // Partial sums of split reductions, each [m, n] of its gemm, at fixed offsets.
  std::vector<int64_t> partial_at(partial_gemm.size() + 1, 0);
  for (std::size_t p = 0; p < partial_gemm.size(); ++p) {
    const Gemm<T>& g = gemms[static_cast<std::size_t>(partial_gemm[p])];
    partial_at[p + 1] = partial_at[p] + g.m * g.n;
  }
  std::vector<C> partials(static_cast<std::size_t>(partial_at.back()));
  // Right operands copied once per product, not per block: the tiles read b as [k, n],
  // so a transposed b is transposed; a bfloat16 b (read by row blocks) is widened.
  // On AVX512-BF16 a bfloat16 b is repacked into pairs of rows instead (packed).
  const auto dot = [](const Gemm<T>& g) {
    if constexpr (kWidened<T>) return g.m > 0 && g.n > 0 && g.k > 0 && dot_tiled(g);
    return false;
  };
  const auto copied = [&](const Gemm<T>& g) {
    if (g.m == 0 || g.n == 0 || g.k == 0 || dot(g)) return false;
    return kWidened<T> ? !split_reduction(g) : tiled(g) && g.trans_b;
  };
  std::vector<int64_t> copy_at(gemms.size() + 1, 0), pack_at(gemms.size() + 1, 0);
  for (std::size_t i = 0; i < gemms.size(); ++i) {
    const Gemm<T>& g = gemms[i];
    copy_at[i + 1] = copy_at[i] + (copied(g) ? g.k * g.n : 0);
    pack_at[i + 1] = pack_at[i] + (dot(g) ? (g.k + 1) / 2 * g.n : 0);
  }
  std::vector<C> b_copies(static_cast<std::size_t>(copy_at.back()));
  std::vector<uint32_t> packed(static_cast<std::size_t>(pack_at.back()));
  const auto gemm_count = static_cast<int64_t>(gemms.size());
#pragma omp parallel for schedule(dynamic, 16) if (copy_at.back() + pack_at.back() > 0)
  for (int64_t i = 0; i < gemm_count; ++i) {
    const Gemm<T>& g = gemms[static_cast<std::size_t>(i)];
    if constexpr (kWidened<T>) {
      if (pack_at[static_cast<std::size_t>(i) + 1] > pack_at[static_cast<std::size_t>(i)]) {
        bf16_dot::pack_pairs(g.b, g.k, g.n, g.trans_b, packed.data() + pack_at[static_cast<std::size_t>(i)]);
      }
    }
    C* dst = b_copies.data() + copy_at[static_cast<std::size_t>(i)];
    if (copy_at[static_cast<std::size_t>(i) + 1] == copy_at[static_cast<std::size_t>(i)]) continue;
    if (g.trans_b && tiled(g)) {
      for (int64_t p = 0; p < g.k; ++p)
        for (int64_t j = 0; j < g.n; ++j) dst[p * g.n + j] = static_cast<C>(g.b[j * g.k + p]);
    } else if constexpr (kWidened<T>) {
      widen(g.b, 1, g.k * g.n, g.k * g.n, dst);  // as stored
    }
  }

  const auto count = static_cast<int64_t>(blocks.size());
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (int64_t i = 0; i < count; ++i) {
    const Block& blk = blocks[static_cast<std::size_t>(i)];
    const Gemm<T>& g = gemms[static_cast<std::size_t>(blk.gemm)];
    const std::size_t gi = static_cast<std::size_t>(blk.gemm);
    C* partial = blk.partial < 0 ? nullptr : partials.data() + partial_at[static_cast<std::size_t>(blk.partial)];
    if constexpr (kWidened<T>) {
      if (partial != nullptr) widened_slice(g, blk.r0, blk.r1, partial);
      else if (pack_at[gi + 1] > pack_at[gi]) bf16_dot::rows(g.a, blk.r0, blk.r1, g.k, packed.data() + pack_at[gi], g.n, g.c);
      else widened_rows(g, blk.r0, blk.r1, b_copies.data() + copy_at[gi], g.trans_b && !tiled(g));
    } else {
      const T* b_plain = copy_at[gi + 1] > copy_at[gi] ? b_copies.data() + copy_at[gi] : g.b;
      if (partial != nullptr) product_slice(g, blk.r0, blk.r1, partial);
      else product_rows(g, blk.r0, blk.r1, b_plain, output_bytes);
    }
  }
  if (partial_gemm.empty()) return;

  // Each split gemm's output = its partials added in block order (fixed by shapes).
  std::vector<std::pair<int64_t, int64_t>> runs;  // [first partial, last + 1) per gemm
  for (std::size_t p = 0; p < partial_gemm.size(); ++p) {
    if (p == 0 || partial_gemm[p] != partial_gemm[p - 1]) runs.emplace_back(static_cast<int64_t>(p), 0);
    runs.back().second = static_cast<int64_t>(p) + 1;
  }
  const auto run_count = static_cast<int64_t>(runs.size());
#pragma omp parallel for schedule(dynamic, 1) if (run_count > 1)
  for (int64_t r = 0; r < run_count; ++r) {
    const auto [first, last] = runs[static_cast<std::size_t>(r)];
    const Gemm<T>& g = gemms[static_cast<std::size_t>(partial_gemm[static_cast<std::size_t>(first)])];
    const int64_t size = g.m * g.n;
    // Summed in place in the first partial, then stored (rounded once for bfloat16).
    C* sum = partials.data() + partial_at[static_cast<std::size_t>(first)];
    for (int64_t p = first + 1; p < last; ++p) {
      const C* pp = partials.data() + partial_at[static_cast<std::size_t>(p)];
#pragma omp simd
      for (int64_t e = 0; e < size; ++e) sum[e] += pp[e];
    }
    if constexpr (kWidened<T>) narrow(sum, size, g.c);
    else std::copy(sum, sum + size, g.c);
  }
}

template void grouped_gemm_cpu<float>(std::span<const Gemm<float>>);
template void grouped_gemm_cpu<BFloat16>(std::span<const Gemm<BFloat16>>);
#if EW_CPU_ISA_LEVEL == 0  // double: baseline copy only (kIsaDispatchedElement)
template void grouped_gemm_cpu<double>(std::span<const Gemm<double>>);
#endif

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::segment_matmul_detail
