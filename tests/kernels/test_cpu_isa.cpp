// Runtime ISA dispatch: every level this build and CPU support gives identical
// results for the dispatched kernels (sort_by_key, run_length_encode, equal to a
// sequential reference; segment_reduce, scatter_reduce, spmm and its backward,
// edge_softmax and its backward, the same bits at every level); forcing an unsupported level or an unknown name is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <numeric>
#include <random>
#include <vector>

#include "edgewise/kernels/common/context.hpp"
#include "edgewise/kernels/cpu_isa.hpp"
#include "edgewise/kernels/edge_softmax.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::test {
namespace {

struct Outputs {
  std::vector<int64_t> sorted, permutation, values, lengths;
  std::vector<int32_t> sorted32;
  std::vector<int64_t> sorted_payload;
};

// Large enough for the parallel MSD + LSD path and wide keys (several digits).
Outputs run_kernels(const std::vector<int64_t>& keys, const std::vector<int32_t>& keys32,
                    const std::vector<int64_t>& payload) {
  const int64_t n = static_cast<int64_t>(keys.size());
  Outputs o;
  o.sorted.resize(keys.size());
  o.permutation.resize(keys.size());
  sort_by_key<int64_t>(VectorView<const int64_t>(keys.data(), n), VectorView<int64_t>(o.sorted.data(), n),
                       VectorView<int64_t>(o.permutation.data(), n));
  o.sorted32.resize(keys32.size());
  o.sorted_payload.resize(payload.size());
  sort_by_key<int32_t, int64_t>(VectorView<const int32_t>(keys32.data(), n),
                                 VectorView<const int64_t>(payload.data(), n),
                                 VectorView<int32_t>(o.sorted32.data(), n),
                                 VectorView<int64_t>(o.sorted_payload.data(), n));
  o.values.resize(keys.size());
  o.lengths.resize(keys.size());
  const int64_t runs = run_length_encode<int64_t>(VectorView<const int64_t>(o.sorted.data(), n),
                                                  VectorView<int64_t>(o.values.data(), n),
                                                  VectorView<int64_t>(o.lengths.data(), n));
  o.values.resize(static_cast<size_t>(runs));
  o.lengths.resize(static_cast<size_t>(runs));
  return o;
}

TEST(CpuIsa, EverySupportedLevelGivesTheReferenceResult) {
  std::mt19937_64 rng(21);
  const size_t n = 300000;
  std::vector<int64_t> keys(n);
  std::vector<int32_t> keys32(n);
  std::vector<int64_t> payload(n);
  std::uniform_int_distribution<int64_t> wide(-(int64_t{1} << 40), int64_t{1} << 40);
  std::uniform_int_distribution<int32_t> narrow(0, 5000);  // many ties: stability matters
  for (size_t i = 0; i < n; ++i) {
    keys[i] = i % 7 == 0 ? keys[i / 2] : wide(rng);  // some repeats for the run lengths
    keys32[i] = narrow(rng);
    payload[i] = static_cast<int64_t>(rng());
  }
  // Sequential reference: stable order, runs of the sorted keys.
  std::vector<int64_t> want_perm(n);
  std::iota(want_perm.begin(), want_perm.end(), int64_t{0});
  std::stable_sort(want_perm.begin(), want_perm.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  std::vector<int64_t> want_values, want_lengths;
  for (int64_t p : want_perm) {
    if (want_values.empty() || want_values.back() != keys[static_cast<size_t>(p)]) {
      want_values.push_back(keys[static_cast<size_t>(p)]);
      want_lengths.push_back(0);
    }
    ++want_lengths.back();
  }
  std::vector<size_t> order32(n);
  std::iota(order32.begin(), order32.end(), size_t{0});
  std::stable_sort(order32.begin(), order32.end(), [&](size_t a, size_t b) { return keys32[a] < keys32[b]; });

  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
    if (static_cast<int>(level) > static_cast<int>(best)) {
      EXPECT_THROW(set_cpu_isa(level), std::invalid_argument) << to_string(level);
      continue;
    }
    SCOPED_TRACE(to_string(level));
    set_cpu_isa(level);
    ASSERT_EQ(cpu_isa(), level);
    const Outputs o = run_kernels(keys, keys32, payload);
    EXPECT_EQ(o.permutation, want_perm);
    EXPECT_EQ(o.values, want_values);
    EXPECT_EQ(o.lengths, want_lengths);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(o.sorted32[i], keys32[order32[i]]) << i;
      ASSERT_EQ(o.sorted_payload[i], payload[order32[i]]) << i;
    }
  }
  set_cpu_isa(original);
  std::printf("[ cpu isa ] best level here: %s\n", to_string(best));
}

// ---- The reductions: segment_reduce, scatter_reduce, spmm and its backward ----
//
// Each level must give the same bits. That holds for float sums too: every kernel
// fixes its reduction order (per output, rows / edges in order, lanes and hub pieces
// merged in a fixed order, scatter partials merged in thread order with the thread
// count unchanged within this process), and the per-level objects are compiled
// without FMA contraction. So the levels are compared bitwise, and the baseline
// against a naive sum with a tolerance (the order differs from the naive one).
// float has per-level copies of every reduction (kIsaDispatchedElement), float16 and
// bfloat16 of segment_reduce and scatter_reduce (kIsaDispatchedScatterElement); other
// types run the baseline copy at every level, so comparing them would prove nothing.

// Every output of one run, as bytes.
using Bytes = std::vector<unsigned char>;
template <class T>
void append(Bytes& out, const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  out.insert(out.end(), p, p + v.size() * sizeof(T));
}

struct ReductionInputs {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;           // [rows, cols]
  std::vector<int64_t> offsets;        // sorted segments of rows, one hub longer than a piece
  std::vector<int32_t> index_few;      // scatter into few outputs (thread partials)
  std::vector<int32_t> index_many;     // scatter into many outputs (owner-computes)
  int64_t segments = 0, few = 0, many = 0;
  // A CSR over `rows` source nodes with `nodes` destinations, its transpose and weights.
  int64_t nodes = 0;
  std::vector<int64_t> csr_offsets, t_offsets, t_edge_ids;
  std::vector<int32_t> csr_indices, t_indices;
  std::vector<float> weights;
};

ReductionInputs make_reduction_inputs(int64_t cols) {
  std::mt19937_64 rng(5 + static_cast<uint64_t>(cols));
  ReductionInputs in;
  in.rows = 50000;
  in.cols = cols;
  const int64_t n = in.rows * cols;
  std::uniform_real_distribution<float> real(-4.0f, 4.0f);
  in.values.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    float v = real(rng);
    if (i % 5 == 0) v = std::round(v * 2.0f) / 2.0f;  // ties: min/max must pick the same (lowest) row
    if (i % 101 == 0) v = i % 202 == 0 ? 0.0f : -0.0f;  // -0 and +0 are one key
    in.values[static_cast<size_t>(i)] = v;
  }
  // Segments: a hub of 40000 rows (longer than one CPU piece at these widths), then
  // short ones of 0..40 rows (empty segments included).
  in.offsets = {0, 40000};
  std::uniform_int_distribution<int64_t> length(0, 40);
  while (in.offsets.back() < in.rows) in.offsets.push_back(std::min(in.rows, in.offsets.back() + length(rng)));
  in.segments = static_cast<int64_t>(in.offsets.size()) - 1;
  in.few = 7;
  in.many = 30000;
  std::uniform_int_distribution<int32_t> to_few(0, static_cast<int32_t>(in.few - 1));
  std::uniform_int_distribution<int32_t> to_many(0, static_cast<int32_t>(in.many - 1));
  for (int64_t r = 0; r < in.rows; ++r) {
    in.index_few.push_back(to_few(rng));
    in.index_many.push_back(to_many(rng));
  }
  // CSR: destination 0 is a hub of 10000 edges (longer than one piece), the others 0..20 edges; sources
  // skewed towards low ids (repeated gathers of the same rows).
  in.nodes = 8000;
  std::uniform_int_distribution<int64_t> degree(0, 20);
  std::uniform_int_distribution<int32_t> source(0, static_cast<int32_t>(in.rows - 1));
  in.csr_offsets = {0};
  for (int64_t v = 0; v < in.nodes; ++v) {
    const int64_t d = v == 0 ? 10000 : degree(rng);
    for (int64_t k = 0; k < d; ++k) in.csr_indices.push_back(k % 3 == 0 ? source(rng) % 500 : source(rng));
    in.csr_offsets.push_back(static_cast<int64_t>(in.csr_indices.size()));
  }
  const int64_t edges = in.csr_offsets.back();
  for (int64_t e = 0; e < edges; ++e) in.weights.push_back(real(rng));
  // Transpose: edges grouped by source, forward order within a source.
  in.t_offsets.assign(static_cast<size_t>(in.rows + 1), 0);
  for (int32_t u : in.csr_indices) ++in.t_offsets[static_cast<size_t>(u) + 1];
  std::partial_sum(in.t_offsets.begin(), in.t_offsets.end(), in.t_offsets.begin());
  std::vector<int64_t> fill(in.t_offsets.begin(), in.t_offsets.end() - 1);
  in.t_indices.resize(static_cast<size_t>(edges));
  in.t_edge_ids.resize(static_cast<size_t>(edges));
  for (int64_t v = 0; v < in.nodes; ++v) {
    for (int64_t e = in.csr_offsets[static_cast<size_t>(v)]; e < in.csr_offsets[static_cast<size_t>(v) + 1]; ++e) {
      const int64_t t = fill[static_cast<size_t>(in.csr_indices[static_cast<size_t>(e)])]++;
      in.t_indices[static_cast<size_t>(t)] = static_cast<int32_t>(v);
      in.t_edge_ids[static_cast<size_t>(t)] = e;
    }
  }
  return in;
}

template <class T>
MatrixView<const T> matrix(const std::vector<T>& v, int64_t rows, int64_t cols) {
  return MatrixView<const T>(v.data(), rows, cols);
}
template <class T>
VectorView<const T> vector_view(const std::vector<T>& v) {
  return VectorView<const T>(v.data(), static_cast<int64_t>(v.size()));
}

// segment_reduce and scatter_reduce of every op and element type; out (+ arg) bytes.
template <class T>
void run_segment_and_scatter(const ReductionInputs& in, const std::vector<T>& values, Bytes& bytes) {
  const int64_t C = in.cols;
  for (ReduceOp op : kAllReduceOps) {
    const bool arg = has_arg(op);
    std::vector<T> out(static_cast<size_t>(in.segments * C));
    std::vector<int64_t> args(arg ? out.size() : 0);
    segment_reduce<T>(matrix(values, in.rows, C), vector_view(in.offsets), op,
                      MatrixView<T>(out.data(), in.segments, C),
                      arg ? MatrixView<int64_t>(args.data(), in.segments, C) : MatrixView<int64_t>{});
    append(bytes, out);
    append(bytes, args);
    for (const auto* index : {&in.index_few, &in.index_many}) {
      const int64_t S = index == &in.index_few ? in.few : in.many;
      std::vector<T> s_out(static_cast<size_t>(S * C));
      std::vector<int64_t> s_args(arg ? s_out.size() : 0);
      scatter_reduce<T, int32_t>(matrix(values, in.rows, C), vector_view(*index), op,
                                 MatrixView<T>(s_out.data(), S, C),
                                 arg ? MatrixView<int64_t>(s_args.data(), S, C) : MatrixView<int64_t>{});
      append(bytes, s_out);
      append(bytes, s_args);
    }
  }
}

// spmm of every op, with and without weights, and every backward it has; bytes of
// all outputs. Returns the unweighted sum too (for the reference check).
std::vector<float> run_spmm(const ReductionInputs& in, Bytes& bytes) {
  const int64_t C = in.cols, S = in.nodes, N = in.rows;
  const int64_t E = in.csr_offsets.back();
  Context& ctx = default_context(Device::cpu());
  std::vector<float> plain_sum;
  for (ReduceOp op : kAllReduceOps) {
    for (bool weighted : {false, true}) {
      const bool arg = has_arg(op);
      std::vector<float> out(static_cast<size_t>(S * C));
      std::vector<int64_t> args(arg ? out.size() : 0);
      const VectorView<const float> w = weighted ? vector_view(in.weights) : VectorView<const float>{};
      spmm<float, int32_t>(vector_view(in.csr_offsets), vector_view(in.csr_indices), w, matrix(in.values, N, C), op,
                           MatrixView<float>(out.data(), S, C),
                           arg ? MatrixView<int64_t>(args.data(), S, C) : MatrixView<int64_t>{});
      append(bytes, out);
      append(bytes, args);
      if (op == ReduceOp::Sum && !weighted) plain_sum = out;
      if (!spmm_has_backward(op)) continue;
      // grad_out: the first S rows of the values.
      const MatrixView<const float> grad_out = matrix(in.values, S, C);
      std::vector<float> grad_x(static_cast<size_t>(N * C));
      if (arg) {
        spmm_arg_backward<float, int32_t>(vector_view(in.t_offsets), vector_view(in.t_indices),
                                          vector_view(in.t_edge_ids), w, grad_out, matrix(args, S, C),
                                          MatrixView<float>(grad_x.data(), N, C), ctx);
      } else {
        spmm_backward<float, int32_t>(vector_view(in.t_offsets), vector_view(in.t_indices),
                                      vector_view(in.t_edge_ids), w, grad_out, op, vector_view(in.csr_offsets),
                                      MatrixView<float>(grad_x.data(), N, C), ctx);
      }
      append(bytes, grad_x);
      if (weighted) {
        std::vector<float> grad_w(static_cast<size_t>(E));
        spmm_weight_backward<float, int32_t>(vector_view(in.csr_offsets), vector_view(in.csr_indices),
                                             matrix(in.values, N, C), grad_out, op,
                                             arg ? matrix(args, S, C) : MatrixView<const int64_t>{},
                                             VectorView<float>(grad_w.data(), E), ctx);
        append(bytes, grad_w);
      }
    }
  }
  return plain_sum;
}

TEST(CpuIsa, ReductionsGiveTheSameBitsAtEveryLevel) {
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  // Specialised widths and the generic one; 16 takes scatter_reduce's packed min/max
  // fold at the AVX-512 level where 30000 outputs x 16 words (3.8 MB) exceed this
  // core's L2 (packed_pays).
  for (int64_t cols : {64, 37, 16}) {
    SCOPED_TRACE("cols " + std::to_string(cols));
    const ReductionInputs in = make_reduction_inputs(cols);
    Bytes baseline;
    for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
      if (static_cast<int>(level) > static_cast<int>(best)) continue;
      SCOPED_TRACE(to_string(level));
      set_cpu_isa(level);
      Bytes bytes;
      run_segment_and_scatter(in, in.values, bytes);  // the types with per-level copies
      run_segment_and_scatter(in, std::vector<BFloat16>(in.values.begin(), in.values.end()), bytes);
      run_segment_and_scatter(in, std::vector<Half>(in.values.begin(), in.values.end()), bytes);
      const std::vector<float> sum = run_spmm(in, bytes);
      if (level == CpuIsa::Baseline) {
        baseline = std::move(bytes);
        // The baseline is right (a naive sum, loose tolerance): identical bits of a
        // wrong result at every level would prove nothing.
        for (int64_t v = 0; v < in.nodes; v += 97) {
          for (int64_t c = 0; c < cols; ++c) {
            double want = 0;
            for (int64_t e = in.csr_offsets[static_cast<size_t>(v)]; e < in.csr_offsets[static_cast<size_t>(v) + 1]; ++e)
              want += in.values[static_cast<size_t>(in.csr_indices[static_cast<size_t>(e)] * cols + c)];
            ASSERT_NEAR(sum[static_cast<size_t>(v * cols + c)], want, 1e-3 * (1 + std::abs(want))) << v << "," << c;
          }
        }
      } else {
        ASSERT_EQ(bytes.size(), baseline.size());
        EXPECT_TRUE(bytes == baseline) << "first differing byte "
                                        << std::mismatch(bytes.begin(), bytes.end(), baseline.begin()).first -
                                               bytes.begin();
      }
    }
  }
  set_cpu_isa(original);
}

TEST(CpuIsa, EdgeSoftmaxGivesTheSameBitsAtEveryLevel) {
  const CpuIsa original = cpu_isa();
  const CpuIsa best = best_supported_cpu_isa();
  std::mt19937_64 rng(31);
  // Rows of 0..60 edges and one hub; 8 heads (the compile-time width), 3 (the generic
  // fused loop) and 20 (one head at a time).
  std::vector<int64_t> offsets{0, 5000};
  std::uniform_int_distribution<int64_t> degree(0, 60);
  while (offsets.size() < 3000) offsets.push_back(offsets.back() + degree(rng));
  const int64_t rows = static_cast<int64_t>(offsets.size()) - 1, E = offsets.back();
  std::uniform_real_distribution<float> real(-40.0f, 40.0f);
  for (int64_t H : {8, 3, 20}) {
    SCOPED_TRACE("heads " + std::to_string(H));
    std::vector<float> scores(static_cast<size_t>(E * H)), grad(scores.size());
    for (auto& v : scores) v = real(rng);
    for (size_t i = 0; i < scores.size(); i += 777) scores[i] = -std::numeric_limits<float>::infinity();
    for (auto& v : grad) v = real(rng) / 40.0f;
    std::vector<float> first_out, first_grad;
    for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm}) {
      if (static_cast<int>(level) > static_cast<int>(best)) continue;
      SCOPED_TRACE(to_string(level));
      set_cpu_isa(level);
      std::vector<float> out(scores.size(), std::nanf("")), grad_scores(scores.size(), std::nanf(""));
      const VectorView<const int64_t> off(offsets.data(), rows + 1);
      Context& ctx = default_context(Device::cpu());
      edge_softmax<float>(off, MatrixView<const float>(scores.data(), E, H), MatrixView<float>(out.data(), E, H), ctx);
      edge_softmax_backward<float>(off, MatrixView<const float>(out.data(), E, H),
                                   MatrixView<const float>(grad.data(), E, H),
                                   MatrixView<float>(grad_scores.data(), E, H), ctx);
      if (level == CpuIsa::Baseline) {
        // Right at the baseline (each head's probabilities sum to 1), so that equal
        // bits elsewhere mean equally right.
        for (int64_t v = 0; v < rows; v += 7) {
          if (offsets[v] == offsets[v + 1]) continue;
          for (int64_t h = 0; h < H; ++h) {
            double total = 0;
            for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) total += out[static_cast<size_t>(e * H + h)];
            ASSERT_NEAR(total, 1.0, 1e-5) << "row " << v << " head " << h;
          }
        }
        first_out = out;
        first_grad = grad_scores;
      } else {
        EXPECT_EQ(std::memcmp(out.data(), first_out.data(), out.size() * sizeof(float)), 0) << "forward";
        EXPECT_EQ(std::memcmp(grad_scores.data(), first_grad.data(), out.size() * sizeof(float)), 0) << "backward";
      }
    }
  }
  set_cpu_isa(original);
}

TEST(CpuIsa, NamesRoundTripAndUnknownNamesAreRefused) {
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512, CpuIsa::Avx512Zmm})
    EXPECT_EQ(parse_cpu_isa(to_string(level)), level);
  EXPECT_THROW(parse_cpu_isa("sse2"), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
