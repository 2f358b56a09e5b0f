// The CPU GEMM of one ISA level (compiled once per level with EW_CPU_ISA_NS =
// isa_<level>, the level's -march, and Eigen's namespace renamed to Eigen_isa_<level>;
// gnn/CMakeLists.txt). Row-major throughout, no copies of the big operands.
//
// GNN layers multiply a tall [nodes, k] matrix by a small weight (forward: X @ W;
// input gradient: G @ W^T) or reduce two tall ones to a small weight gradient
// (X^T @ G). Eigen, given the whole tall operand, packs all of it into panels and
// splits the work by output blocks (for a weight gradient, 64 x 64 outputs over two
// threads). Here instead:
//  - tall @ small with an output width of 8..128: a register-tiled loop over rows
//    (kRowTile rows x the width in accumulators, the small weight in L1), writing
//    each output row once; 1.4-3x faster than Eigen on [1M, 64] outputs at k = 64
//    and 16 (edgewise-bench --filter '^matmul/', AVX-512);
//  - tall^T @ tall: fixed blocks of kTallBlockRows rows (L2-sized), one single-thread
//    Eigen product per block into its own partial, partials added in block order
//    (1.6x faster than one Eigen call at [1M, 64]^T @ [1M, 64] here; a register-tiled
//    loop like the one above measured slower than Eigen's kernel for this form).
// Blocks and tiles do not depend on the thread count, so neither do the results.
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "tensor/isa_ops_cpu.hpp"

#ifndef EW_CPU_ISA_NS
#define EW_CPU_ISA_NS isa_baseline
#endif
#include "edgewise/kernels/cpu/row_tile_gemm.hpp"

namespace edgewise::gnn::ops::cpu::EW_CPU_ISA_NS {

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;

constexpr int64_t kTallBlockRows = 4096;
constexpr int64_t kSmallDim = 256;  // k and n up to this count as "small" (weights)
constexpr int64_t kMinTallRows = 1024;  // outputs shorter than this go to Eigen

namespace tiles = edgewise::row_tile_gemm::EW_CPU_ISA_NS;

// c[r, :] (= or +=) alpha * a[r, :] @ w for rows [0, rows): a [rows, k] (row stride
// k), w [k, kWidth] row-major in cache; the register tiles of row_tile_gemm.hpp, one
// per loop iteration.
template <int kWidth>
void tall_times_small(const float* a, int64_t rows, int64_t k, const float* w, float* c, float alpha, bool add) {
  constexpr int64_t kRowTile = tiles::kRowTile<kWidth>;
  const int64_t tile_count = (rows + kRowTile - 1) / kRowTile;
  const bool stream = tiles::streaming(c, kWidth, add, rows * kWidth * static_cast<int64_t>(sizeof(float)));
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (int64_t t = 0; t < tile_count; ++t) {
      const int64_t r0 = t * kRowTile;
      tiles::tile<kWidth>(a, r0, std::min(kRowTile, rows - r0), k, w, c, alpha, add, stream);
    }
    if (stream) tiles::end_streaming();
  }
}

// tall_times_small for the widths it is instantiated for; false for others.
bool tall_times_small_any(const float* a, int64_t rows, int64_t k, const float* w, int64_t width, float* c,
                          float alpha, bool add) {
  switch (width) {
    case 8: tall_times_small<8>(a, rows, k, w, c, alpha, add); return true;
    case 16: tall_times_small<16>(a, rows, k, w, c, alpha, add); return true;
    case 32: tall_times_small<32>(a, rows, k, w, c, alpha, add); return true;
    case 64: tall_times_small<64>(a, rows, k, w, c, alpha, add); return true;
    case 128: tall_times_small<128>(a, rows, k, w, c, alpha, add); return true;
    default: return false;
  }
}

using tiles::is_tiled_width;

// c (+)= alpha * op(a) @ op(b) on the calling thread's Eigen.
void eigen_product(ConstMap a, bool ta, ConstMap b, bool tb, Map c, float alpha) {
  if (!ta && !tb) c.noalias() += alpha * (a * b);
  if (ta && !tb) c.noalias() += alpha * (a.transpose() * b);
  if (!ta && tb) c.noalias() += alpha * (a * b.transpose());
  if (ta && tb) c.noalias() += alpha * (a.transpose() * b.transpose());
}
}  // namespace

void gemm(const GemmArgs& g) {
  Map c(g.c, g.c_rows, g.c_cols);
  if (c.size() == 0) return;
  const bool empty_product = g.a_rows * g.a_cols == 0 || g.b_rows * g.b_cols == 0;
  const int64_t k = g.transpose_a ? g.a_rows : g.a_cols;  // the summed dimension

  // Tall output, small weight (its k x width copy, transposed when b is, fits L1/L2).
  if (!empty_product && !g.transpose_a && g.c_rows >= kMinTallRows && k <= kSmallDim &&
      is_tiled_width(g.c_cols)) {
    std::vector<float> w;
    const float* wp = g.b;
    if (g.transpose_b) {
      w.resize(static_cast<size_t>(k * g.c_cols));
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < g.c_cols; ++j) w[p * g.c_cols + j] = g.b[j * k + p];
      wp = w.data();
    }
    if (g.beta != 0.0f && g.beta != 1.0f) c *= g.beta;
    // beta == 0: c is written, never read (its old contents, NaN included, are ignored)
    tall_times_small_any(g.a, g.c_rows, k, wp, g.c_cols, g.c, g.alpha, g.beta != 0.0f);
    return;
  }

  if (g.beta == 0.0f) {
    c.setZero();  // beta == 0 ignores c's old contents, NaN included (BLAS semantics)
  } else if (g.beta != 1.0f) {
    c *= g.beta;
  }
  if (empty_product) return;
  ConstMap a(g.a, g.a_rows, g.a_cols);
  ConstMap b(g.b, g.b_rows, g.b_cols);

  // Small output summed over a tall dimension (a^T @ b, a weight gradient): one
  // partial product per row block, then the partials added in block order.
  if (g.transpose_a && !g.transpose_b && k >= 2 * kTallBlockRows && g.c_rows <= kSmallDim &&
      g.c_cols <= kSmallDim) {
    const int64_t blocks = (k + kTallBlockRows - 1) / kTallBlockRows;
    const int64_t out = g.c_rows * g.c_cols;
    std::vector<float> partials(static_cast<size_t>(blocks * out));
#pragma omp parallel for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t r0 = blk * kTallBlockRows, rows = std::min(kTallBlockRows, k - r0);
      Map p(partials.data() + blk * out, g.c_rows, g.c_cols);
      p.setZero();
      eigen_product(ConstMap(g.a + r0 * g.a_cols, rows, g.a_cols), true, ConstMap(g.b + r0 * g.b_cols, rows, g.b_cols),
                    false, p, 1.0f);
    }
    Map sum(partials.data(), g.c_rows, g.c_cols);
    for (int64_t blk = 1; blk < blocks; ++blk) sum += Map(partials.data() + blk * out, g.c_rows, g.c_cols);
    c += g.alpha * sum;
    return;
  }
  eigen_product(a, g.transpose_a, b, g.transpose_b, c, g.alpha);
}

}  // namespace edgewise::gnn::ops::cpu::EW_CPU_ISA_NS
