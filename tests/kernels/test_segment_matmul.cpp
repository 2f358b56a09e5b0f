// segment_matmul, its weight gradient and grouped_matmul against the double-precision
// oracles: segment regimes (empty types, one-row types, T = 1, one huge type, power
// law), widths around the block sizes, float, double and bfloat16, transposed weights, weight
// gradients long enough to be split, every transpose of grouped products, empty and
// zero-width products, poisoned outputs, bitwise reproducibility across thread counts,
// and bad input (named, outputs untouched).
#include <gtest/gtest.h>

#include <utility>
#include <omp.h>

#include <array>
#include <cstring>
#include <string>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/segment_matmul.hpp"
#include "segment_matmul_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using SegmentMatmulTest = DeviceTest;

template <class T>
double rtol_for() {
  return sizeof(T) == 4 ? 1e-5 : 1e-13;
}

template <class T>
std::vector<T> as_type(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, BFloat16>) return "bfloat16";
  return sizeof(T) == 4 ? "float" : "double";
}

// Values in [-1, 1); bfloat16 ones are float values rounded, so the oracle sees the
// exact inputs the kernel reads.
template <class T>
std::vector<T> random_elements(std::mt19937_64& rng, int64_t n) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const auto f = random_values<float>(rng, n, -1, 1);
    return std::vector<BFloat16>(f.begin(), f.end());
  } else {
    return random_values<T>(rng, n, -1, 1);
  }
}

// A product against its oracle. bfloat16 outputs are float sums rounded once: within
// half a bfloat16 ulp (2^-8 relative) of the exact value, plus float's accumulation
// error; rounding partial sums on the way would exceed it.
template <class T>
::testing::AssertionResult matches(const std::vector<T>& got, const reference::ProductRef& ref) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    const std::vector<double> widened(got.begin(), got.end());
    std::vector<double> tol(ref.value.size());
    for (size_t i = 0; i < tol.size(); ++i) tol[i] = std::ldexp(std::fabs(ref.value[i]), -8) + 1e-5 * ref.scale[i];
    return close_to(widened, ref.value, tol, 1.0, 0);
  } else {
    return close_to(got, as_type<T>(ref.value), ref.scale, rtol_for<T>(), 0);
  }
}

template <class T>
void check_segments(Device device, const std::vector<int64_t>& lengths, int64_t K, int64_t M, uint64_t salt,
                    const std::string& label) {
  SCOPED_TRACE(label + " T=" + std::to_string(lengths.size()) + " K=" + std::to_string(K) + " M=" +
               std::to_string(M) + " " + type_name<T>());
  auto rng = rng_for(salt);
  const auto ptr = offsets_from_lengths(lengths);
  const int64_t N = ptr.back(), types = static_cast<int64_t>(lengths.size());
  const auto x = random_elements<T>(rng, N * K);
  const auto w = random_elements<T>(rng, types * K * M);
  const auto g = random_elements<T>(rng, N * M);
  const auto xd = to_device(x, device), wd = to_device(w, device), gd = to_device(g, device);
  Context ctx(device);
  const VectorView<const int64_t> pv(ptr.data(), static_cast<int64_t>(ptr.size()));

  auto out = poisoned<T>(N * M, device);
  segment_matmul<T>(pv, std::as_const(xd).matrix(N, K), std::as_const(wd).matrix(types * K, M), out.matrix(N, M), ctx);
  const auto fwd = reference::segment_matmul_ref(ptr, x, K, w, M, false);
  EXPECT_TRUE(matches(out.to_host_vector(), fwd)) << "forward";

  // transpose_weight: grad_x = grad @ weight[t]^T with weight read as [T*K, M] = [T*M', K'].
  auto gx = poisoned<T>(N * K, device);
  segment_matmul<T>(pv, std::as_const(gd).matrix(N, M), std::as_const(wd).matrix(types * K, M), gx.matrix(N, K), ctx,
                    true);
  const auto bwd = reference::segment_matmul_ref(ptr, g, M, w, K, true);
  EXPECT_TRUE(matches(gx.to_host_vector(), bwd)) << "transposed";

  auto gw = poisoned<T>(types * K * M, device);
  segment_matmul_weight_grad<T>(pv, std::as_const(xd).matrix(N, K), std::as_const(gd).matrix(N, M),
                                gw.matrix(types * K, M), ctx);
  const auto wref = reference::segment_matmul_weight_grad_ref(ptr, x, K, g, M);
  EXPECT_TRUE(matches(gw.to_host_vector(), wref)) << "weight grad";
}

TEST_P(SegmentMatmulTest, SegmentRegimesAgainstOracle) {
  auto rng = rng_for(1);
  const std::pair<int64_t, int64_t> widths[] = {{1, 1}, {3, 5}, {16, 16}, {64, 64}, {65, 33}, {7, 130}};
  const Regime regimes[] = {Regime::Uniform, Regime::AllEmpty, Regime::AllSingleton, Regime::OneHub,
                            Regime::PowerLaw, Regime::SparseEmpty};
  uint64_t salt = 100;
  for (const auto& [K, M] : widths) {
    for (Regime regime : regimes) {
      for (int64_t types : {1, 8, 67}) {
        const auto lengths = segment_lengths(rng, regime, types, 20);
        check_segments<float>(device(), lengths, K, M, ++salt, "regime " + std::to_string(static_cast<int>(regime)));
        check_segments<double>(device(), lengths, K, M, ++salt, "regime " + std::to_string(static_cast<int>(regime)));
      }
    }
  }
}

TEST_P(SegmentMatmulTest, OneHugeTypeAndLongWeightGradients) {
  // T = 1 with 20 000 rows: output row blocks and a weight gradient split in blocks of rows.
  check_segments<float>(device(), {20000}, 32, 48, 7, "one huge type");
  check_segments<double>(device(), {20000}, 32, 48, 8, "one huge type");
  // A long type among short and empty ones.
  check_segments<float>(device(), {0, 3, 9000, 1, 0, 4100, 4096}, 16, 8, 9, "mixed");
  // Outputs past 16 MiB: written with streaming stores on CPUs that have them.
  check_segments<float>(device(), {0, 3, 40001, 1, 25533, 7}, 4, 64, 10, "streamed output");
}

TEST_P(SegmentMatmulTest, BFloat16RoundsOnceAtEveryShape) {
  auto rng = rng_for(2);
  // Register-tiled widths (64, 32, 16, 48 and 128 with odd K: AVX512-BF16 tiles where
  // the CPU has them; transposed weights are copied or packed once), untiled
  // ones, a tall weight gradient split along its rows, and empty / one-row types.
  const std::pair<int64_t, int64_t> widths[] = {{64, 64}, {32, 16}, {16, 32}, {7, 48}, {33, 128}, {3, 5}, {65, 33},
                                                {7, 130}};
  uint64_t salt = 300;
  for (const auto& [K, M] : widths) {
    for (Regime regime : {Regime::Uniform, Regime::AllSingleton, Regime::OneHub, Regime::SparseEmpty}) {
      for (int64_t types : {1, 8, 67}) {
        check_segments<BFloat16>(device(), segment_lengths(rng, regime, types, 20), K, M, ++salt, "regime");
      }
    }
  }
  check_segments<BFloat16>(device(), {0, 3, 9000, 1, 0, 4100, 4096}, 16, 64, 10, "long weight gradients");
}

TEST_P(SegmentMatmulTest, EmptyInputs) {
  Context ctx(device());
  // N = 0 rows over two empty types: nothing written, weight gradient all zeros.
  const std::vector<int64_t> ptr{0, 0, 0};
  const VectorView<const int64_t> pv(ptr.data(), 3);
  Buffer<float> x(0, device()), g(0, device()), out(0, device());
  auto w = to_device(std::vector<float>(2 * 4 * 5, 1.0f), device());
  segment_matmul<float>(pv, std::as_const(x).matrix(0, 4), std::as_const(w).matrix(8, 5), out.matrix(0, 5), ctx);
  auto gw = poisoned<float>(2 * 4 * 5, device());
  segment_matmul_weight_grad<float>(pv, std::as_const(x).matrix(0, 4), std::as_const(g).matrix(0, 5), gw.matrix(8, 5),
                                    ctx);
  EXPECT_TRUE(equal_exactly(gw.to_host_vector(), std::vector<float>(40, 0.0f)));
}

template <class T>
void check_grouped(Device device, MatmulTranspose tr, uint64_t salt) {
  SCOPED_TRACE(std::string("trans_a=") + (tr.a ? "1" : "0") + " trans_b=" + (tr.b ? "1" : "0"));
  auto rng = rng_for(salt);
  // (m, n, k) per product: ordinary, one-row, zero rows, zero reduction (zeros), long reduction.
  const std::vector<std::array<int64_t, 3>> shapes{{5, 7, 3}, {1, 16, 64}, {0, 4, 4}, {6, 3, 0}, {3, 2, 9000},
                                                   {300, 65, 17}, {4, 0, 5}};
  std::vector<Buffer<T>> as, bs, outs;
  std::vector<std::vector<T>> ah, bh;
  for (const auto& [m, n, k] : shapes) {
    ah.push_back(random_elements<T>(rng, m * k));
    bh.push_back(random_elements<T>(rng, k * n));
    as.push_back(to_device(ah.back(), device));
    bs.push_back(to_device(bh.back(), device));
    outs.push_back(poisoned<T>(m * n, device));
  }
  std::vector<MatrixView<const T>> av, bv;
  std::vector<MatrixView<T>> ov;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [m, n, k] = shapes[i];
    av.push_back(tr.a ? std::as_const(as[i]).matrix(k, m) : std::as_const(as[i]).matrix(m, k));
    bv.push_back(tr.b ? std::as_const(bs[i]).matrix(n, k) : std::as_const(bs[i]).matrix(k, n));
    ov.push_back(outs[i].matrix(m, n));
  }
  Context ctx(device);
  grouped_matmul<T>(av, bv, ov, ctx, tr);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto [m, n, k] = shapes[i];
    const auto ref = reference::matmul_ref(ah[i].data(), bh[i].data(), m, n, k, tr.a, tr.b);
    EXPECT_TRUE(matches(outs[i].to_host_vector(), ref)) << type_name<T>() << " product " << i;
  }
}

TEST_P(SegmentMatmulTest, GroupedEveryTranspose) {
  uint64_t salt = 500;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      check_grouped<float>(device(), {ta, tb}, ++salt);
      check_grouped<double>(device(), {ta, tb}, ++salt);
      check_grouped<BFloat16>(device(), {ta, tb}, ++salt);
    }
  }
  Context ctx(device());
  grouped_matmul<float>({}, {}, {}, ctx);  // no products: nothing to do
}

// segment_matmul and its weight gradient at `threads` threads, as the outputs' bytes.
template <class T>
std::vector<uint8_t> bytes_at(int threads, const std::vector<int64_t>& ptr, const std::vector<T>& x,
                              const std::vector<T>& w, const std::vector<T>& g, int64_t K, int64_t M) {
  const int64_t N = ptr.back(), types = static_cast<int64_t>(ptr.size()) - 1;
  const VectorView<const int64_t> pv(ptr.data(), static_cast<int64_t>(ptr.size()));
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  std::vector<T> out(static_cast<size_t>(N * M + types * K * M));
  Context ctx;
  segment_matmul<T>(pv, {x.data(), N, K}, {w.data(), types * K, M}, {out.data(), N, M}, ctx);
  segment_matmul_weight_grad<T>(pv, {x.data(), N, K}, {g.data(), N, M}, {out.data() + N * M, types * K, M}, ctx);
  omp_set_num_threads(saved);
  const auto* p = reinterpret_cast<const uint8_t*>(out.data());
  return {p, p + out.size() * sizeof(T)};
}

TEST(SegmentMatmulCpu, BitwiseAcrossThreadCounts) {
  auto rng = rng_for(900);
  const auto lengths = segment_lengths(rng, Regime::PowerLaw, 40, 300);
  const auto ptr = offsets_from_lengths(lengths);
  const int64_t N = ptr.back(), K = 24, M = 40, T = 40;
  const auto x = random_values<float>(rng, N * K, -1, 1), w = random_values<float>(rng, T * K * M, -1, 1),
             g = random_values<float>(rng, N * M, -1, 1);
  const auto one = bytes_at(1, ptr, x, w, g, K, M);
  EXPECT_TRUE(equal_exactly(bytes_at(2, ptr, x, w, g, K, M), one));
  EXPECT_TRUE(equal_exactly(bytes_at(3, ptr, x, w, g, K, M), one));
  // bfloat16: the same blocks, each widened (or on bfloat16 tiles) and rounded alone.
  const std::vector<BFloat16> xb(x.begin(), x.end()), wb(w.begin(), w.end()), gb(g.begin(), g.end());
  for (int64_t width : {M, int64_t{32}}) {
    std::vector<BFloat16> wide(static_cast<size_t>(T * K * width)), gw(static_cast<size_t>(N * width));
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = wb[i % wb.size()];
    for (size_t i = 0; i < gw.size(); ++i) gw[i] = gb[i % gb.size()];
    const auto one_bf16 = bytes_at(1, ptr, xb, wide, gw, K, width);
    EXPECT_TRUE(equal_exactly(bytes_at(2, ptr, xb, wide, gw, K, width), one_bf16)) << width;
    EXPECT_TRUE(equal_exactly(bytes_at(3, ptr, xb, wide, gw, K, width), one_bf16)) << width;
  }
}

// `call` throws std::invalid_argument whose message holds `needle`; `out` is untouched.
template <class F>
void expect_rejected(F&& call, const std::string& needle, const std::vector<float>& out,
                     const std::vector<float>& before) {
  try {
    call();
    ADD_FAILURE() << "no throw (expected: " << needle << ")";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
  EXPECT_EQ(std::memcmp(out.data(), before.data(), out.size() * sizeof(float)), 0) << needle << ": output changed";
}

TEST(SegmentMatmulCpu, BadInputNamedOutputUntouched) {
  const int64_t N = 6, K = 3, M = 2;
  std::vector<float> x(N * K, 1.0f), w(2 * K * M, 1.0f), g(N * M, 1.0f);
  const std::vector<float> poison(64, -7.0f);
  std::vector<float> out = poison;
  Context ctx;
  auto fwd = [&](std::vector<int64_t> ptr, int64_t k, int64_t w_rows, int64_t out_cols) {
    return [&, ptr, k, w_rows, out_cols]() {
      segment_matmul<float>({ptr.data(), static_cast<int64_t>(ptr.size())}, {x.data(), N, k},
                            {w.data(), w_rows, M}, {out.data(), N, out_cols}, ctx);
    };
  };
  expect_rejected(fwd({1, 3, 6}, K, 2 * K, M), "ptr[0] must be 0", out, poison);
  expect_rejected(fwd({0, 4, 3, 6}, K, 3 * K - 3, M), "ptr must be nondecreasing", out, poison);
  expect_rejected(fwd({0, 3, 5}, K, 2 * K, M), "must equal x.rows()", out, poison);
  expect_rejected(fwd({0, 3, 6}, K, 2 * K + 1, M), "weight.rows()", out, poison);
  expect_rejected(fwd({0, 6}, K, 2 * K, M), "weight must be [T * K, M] with K = x.cols()", out, poison);
  expect_rejected(fwd({0, 3, 6}, K, 2 * K, M + 1), "out must be", out, poison);
  expect_rejected(fwd({}, K, 2 * K, M), "ptr must have T + 1 >= 1", out, poison);
  // The output inside an input.
  expect_rejected([&] {
    const std::vector<int64_t> ptr{0, 3, 6};
    segment_matmul<float>({ptr.data(), 3}, {x.data(), N, K}, {w.data(), 2 * K, M}, {x.data(), N, M}, ctx);
  }, "overlap", out, poison);
  expect_rejected([&] {
    const std::vector<int64_t> ptr{0, 3, 6};
    segment_matmul_weight_grad<float>({ptr.data(), 3}, {x.data(), N, K}, {g.data(), N, M}, {out.data(), 2 * K + 1, M},
                                      ctx);
  }, "grad_weight must be", out, poison);
  // grouped: lengths, chaining, overlapping outputs.
  std::vector<MatrixView<const float>> a{{x.data(), N, K}}, b{{w.data(), K, M}};
  std::vector<MatrixView<float>> o{{out.data(), N, M}};
  expect_rejected([&] { grouped_matmul<float>(a, b, {}, ctx); }, "must have one length", out, poison);
  expect_rejected([&] {
    std::vector<MatrixView<const float>> b2{{w.data(), K + 1, M}};
    grouped_matmul<float>(a, b2, o, ctx);
  }, "do not chain", out, poison);
  expect_rejected([&] {
    std::vector<MatrixView<const float>> a2{{x.data(), N, K}, {x.data(), N, K}}, b2{{w.data(), K, M}, {w.data(), K, M}};
    std::vector<MatrixView<float>> o2{{out.data(), N, M}, {out.data() + 4, N, M}};
    grouped_matmul<float>(a2, b2, o2, ctx);
  }, "overlap", out, poison);
  expect_rejected([&] {
    std::vector<MatrixView<float>> o2{{w.data(), N, M}};
    grouped_matmul<float>(a, b, o2, ctx);
  }, "overlaps the input b[0]", out, poison);
}

INSTANTIATE_TEST_SUITE_P(Devices, SegmentMatmulTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
