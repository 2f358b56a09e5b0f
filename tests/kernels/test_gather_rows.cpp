// gather_rows_csr / gather_rows_coo against the sequential oracle, bit for bit: every
// element type (random bit patterns, NaN payloads included), int32 and int64 index,
// widths around the specialised ones, segment regimes (empty, singleton, one hub,
// power law), offsets that leave rows uncovered before, between batches and after,
// shared and per-batch offsets / index, empty problems, poisoned outputs, and bad
// input (named with its position, out untouched).
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "edgewise/kernels/gather_rows.hpp"
#include "gather_rows_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using GatherRowsTest = DeviceTest;

// (A, rows of offsets / index): one batch; batches sharing one row; a row per batch.
constexpr std::pair<int64_t, int64_t> kBatchings[] = {{1, 1}, {3, 1}, {3, 3}};

// n elements of random bits: a copy must reproduce any pattern.
template <class T>
std::vector<T> random_bits(std::mt19937_64& rng, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) {
    const uint64_t bits = rng();
    std::memcpy(&x, &bits, sizeof(T));
  }
  return v;
}

template <class T>
::testing::AssertionResult same_bits(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << "first difference at element " << i << " of " << got.size();
    }
  }
  return ::testing::AssertionSuccess();
}

// offsets [Ao, S + 1] (row-major), A batches of M output rows, C columns.
template <class T>
void check_csr(Device device, const std::vector<int64_t>& offsets, int64_t Ao, int64_t A, int64_t M, int64_t C,
               uint64_t salt) {
  const int64_t S = static_cast<int64_t>(offsets.size()) / Ao - 1;
  SCOPED_TRACE("csr A=" + std::to_string(A) + " Ao=" + std::to_string(Ao) + " S=" + std::to_string(S) +
               " M=" + std::to_string(M) + " C=" + std::to_string(C) + " bytes=" + std::to_string(sizeof(T)));
  auto rng = rng_for(salt);
  const auto values = random_bits<T>(rng, A * S * C);
  const auto d_values = to_device(values, device);
  const auto d_offsets = to_device(offsets, device);
  auto out = poisoned<T>(A * M * C, device);
  gather_rows_csr<T>(std::as_const(d_values).matrix(A * S, C), std::as_const(d_offsets).matrix(Ao, S + 1),
                     out.matrix(A * M, C), A);
  EXPECT_TRUE(same_bits(out.to_host_vector(), reference::gather_rows_csr_ref(values, offsets, Ao, A, M, C)));
}

// fresh: the context says out was just allocated (the CPU copy then checks the index as
// it reads it instead of in a pass before).
template <class T, class I>
void check_coo(Device device, const std::vector<I>& index, int64_t Ai, int64_t A, int64_t S, int64_t C,
               uint64_t salt, bool fresh = false) {
  const int64_t E = static_cast<int64_t>(index.size()) / Ai;
  SCOPED_TRACE("coo A=" + std::to_string(A) + " Ai=" + std::to_string(Ai) + " S=" + std::to_string(S) +
               " E=" + std::to_string(E) + " C=" + std::to_string(C) + " bytes=" + std::to_string(sizeof(T)) +
               " index bytes=" + std::to_string(sizeof(I)));
  auto rng = rng_for(salt);
  const auto values = random_bits<T>(rng, A * S * C);
  const auto d_values = to_device(values, device);
  const auto d_index = to_device(index, device);
  auto out = poisoned<T>(A * E * C, device);
  Context ctx(device);
  ctx.outputs_fresh = fresh;
  gather_rows_coo<T, I>(std::as_const(d_values).matrix(A * S, C), std::as_const(d_index).matrix(Ai, E),
                        out.matrix(A * E, C), A, ctx);
  ctx.synchronize();
  EXPECT_TRUE(same_bits(out.to_host_vector(), reference::gather_rows_coo_ref(values, index, Ai, A, S, C)));
}

// Ao rows of offsets for S segments of the regime, shifted so `before` rows precede
// the first segment; M leaves `after` rows past the longest batch uncovered.
std::vector<int64_t> regime_offsets(std::mt19937_64& rng, Regime regime, int64_t Ao, int64_t S, int64_t mean,
                                    int64_t before, int64_t& M, int64_t after) {
  std::vector<int64_t> all;
  int64_t longest = 0;
  for (int64_t a = 0; a < Ao; ++a) {
    auto off = offsets_from_lengths(segment_lengths(rng, regime, S, mean));
    for (auto& o : off) o += before;
    longest = std::max(longest, off.back());
    all.insert(all.end(), off.begin(), off.end());
  }
  M = longest + after;
  return all;
}

template <class T>
void csr_regimes(Device device) {
  const Regime regimes[] = {Regime::Uniform, Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,  Regime::PowerLaw, Regime::SparseEmpty};
  uint64_t salt = 0;
  for (Regime regime : regimes) {
    SCOPED_TRACE(regime_name(regime));
    for (int64_t C : {1, 3, 16, 64}) {
      for (auto [A, Ao] : kBatchings) {
        auto rng = rng_for(++salt);
        int64_t M = 0;
        const auto offsets = regime_offsets(rng, regime, Ao, 37, 5, salt % 3, M, salt % 2 * 4);
        check_csr<T>(device, offsets, Ao, A, M, C, salt);
      }
    }
  }
}

TEST_P(GatherRowsTest, CsrRegimesEveryElementSize) {
  csr_regimes<float>(device());
  csr_regimes<double>(device());
  csr_regimes<BFloat16>(device());
  csr_regimes<Half>(device());
  csr_regimes<int32_t>(device());
  csr_regimes<int64_t>(device());
}

// Enough rows for many blocks and every thread; widths around each specialised one.
TEST_P(GatherRowsTest, CsrWidthsAndLargeProblems) {
  uint64_t salt = 100;
  for (int64_t C : {1, 2, 4, 7, 8, 9, 16, 31, 32, 33, 64, 65, 128, 257}) {
    auto rng = rng_for(++salt);
    int64_t M = 0;
    const auto offsets = regime_offsets(rng, Regime::PowerLaw, 2, 301, 40, 3, M, 5);
    check_csr<float>(device(), offsets, 2, 2, M, C, salt);
    check_csr<BFloat16>(device(), offsets, 2, 2, M, C, salt);
  }
  // One huge segment, and offsets covering nothing before / after it in other batches.
  check_csr<float>(device(), {0, 0, 200000, 200000}, 1, 2, 200000, 3, ++salt);
  check_csr<double>(device(), {0, 150000, 150000, 10, 10, 10}, 2, 2, 200000, 1, ++salt);
}

// Outputs of 32 MB and more bypass the caches where the row is a multiple of 16 bytes;
// an output that is not 16-byte aligned takes the regular stores.
TEST_P(GatherRowsTest, LargeOutputsStreamedOrNot) {
  check_csr<float>(device(), {0, 0, 400000, 600000}, 1, 2, 600000, 16, 150);  // 76.8 MB
  check_csr<BFloat16>(device(), {3, 3, 1000000, 2500000, 0, 7, 7, 2600000}, 2, 2, 2600000, 8, 151);
  check_csr<double>(device(), {0, 700000}, 1, 1, 800000, 8, 152);
  auto rng = rng_for(153);
  std::uniform_int_distribution<int64_t> pick(0, 4999);
  std::vector<int64_t> index(600000);
  for (auto& i : index) i = pick(rng);
  check_coo<float, int64_t>(device(), index, 1, 1, 5000, 32, 154);  // 76.8 MB
  check_coo<Half, int64_t>(device(), index, 2, 2, 5000, 32, 155);
  // out one element into its buffer: never 16-byte aligned.
  const int64_t E = static_cast<int64_t>(index.size()), C = 16;
  const auto values = random_bits<float>(rng, 5000 * C);
  const auto d_values = to_device(values, device());
  const auto d_index = to_device(index, device());
  auto buffer = poisoned<float>(E * C + 1, device());
  gather_rows_coo<float, int64_t>(std::as_const(d_values).matrix(5000, C), std::as_const(d_index).matrix(1, E),
                                  {buffer.data() + 1, E, C, device()});
  std::vector<float> got = buffer.to_host_vector();
  got.erase(got.begin());
  EXPECT_TRUE(same_bits(got, reference::gather_rows_coo_ref(values, index, 1, 1, 5000, C)));
}

// Shared offsets over several batches with short segments (the per-block segment ids
// path): source rows too large to share the cache (groups of batches), uncovered head
// and tail, and a streamed output (38 MB of 16-byte rows).
TEST_P(GatherRowsTest, CsrSharedShortSegments) {
  auto rng = rng_for(160);
  int64_t M = 0;
  const auto wide = regime_offsets(rng, Regime::Uniform, 1, 100000, 5, 3, M, 9);
  check_csr<float>(device(), wide, 1, 5, M, 1, 161);
  check_csr<BFloat16>(device(), wide, 1, 3, M, 3, 162);
  const auto sparse = regime_offsets(rng, Regime::SparseEmpty, 1, 20000, 20, 0, M, 0);
  check_csr<float>(device(), sparse, 1, 2, M, 2, 163);
  std::vector<int64_t> even(20001);
  for (size_t s = 0; s < even.size(); ++s) even[s] = static_cast<int64_t>(s) * 30;
  check_csr<float>(device(), even, 1, 4, 600000, 4, 164);
}

TEST_P(GatherRowsTest, CsrEdgeShapes) {
  check_csr<float>(device(), {0, 1}, 1, 1, 1, 1, 1);            // one element
  check_csr<float>(device(), {0, 0}, 1, 1, 4, 2, 2);            // nothing covered: all zeros
  check_csr<float>(device(), {3}, 1, 2, 5, 2, 3);               // S = 0: all zeros
  check_csr<float>(device(), {0, 0, 0}, 1, 1, 0, 2, 4);         // M = 0
  check_csr<float>(device(), {0, 2, 2, 3}, 1, 0, 0, 2, 5);      // A = 0
  check_csr<float>(device(), {2, 2, 4, 4, 5}, 1, 4, 7, 1, 6);   // uncovered head and tail, empty segments
  check_csr<int64_t>(device(), {0, 3, 0, 1}, 2, 2, 3, 1, 7);    // per-batch offsets ending early
}

TEST_P(GatherRowsTest, CooEveryElementAndIndexType) {
  uint64_t salt = 200;
  for (int64_t C : {1, 2, 3, 16, 33, 64}) {
    for (auto [A, Ai] : kBatchings) {
      auto rng = rng_for(++salt);
      const int64_t S = 29, E = 1000;
      std::uniform_int_distribution<int64_t> pick(0, S - 1);
      std::vector<int64_t> i64(static_cast<size_t>(Ai * E));
      for (auto& i : i64) i = pick(rng);
      const std::vector<int32_t> i32(i64.begin(), i64.end());
      check_coo<float, int64_t>(device(), i64, Ai, A, S, C, salt);
      check_coo<float, int64_t>(device(), i64, Ai, A, S, C, salt, /*fresh=*/true);
      check_coo<float, int32_t>(device(), i32, Ai, A, S, C, salt);
      check_coo<BFloat16, int32_t>(device(), i32, Ai, A, S, C, salt, /*fresh=*/true);
      check_coo<double, int64_t>(device(), i64, Ai, A, S, C, salt);
      check_coo<BFloat16, int64_t>(device(), i64, Ai, A, S, C, salt);
      check_coo<Half, int32_t>(device(), i32, Ai, A, S, C, salt);
      check_coo<int32_t, int64_t>(device(), i64, Ai, A, S, C, salt);
      check_coo<uint32_t, int64_t>(device(), i64, Ai, A, S, C, salt);
      check_coo<int64_t, int32_t>(device(), i32, Ai, A, S, C, salt);
    }
  }
}

TEST_P(GatherRowsTest, CooLargeAndEdgeShapes) {
  auto rng = rng_for(300);
  std::uniform_int_distribution<int64_t> pick(0, 999);
  std::vector<int64_t> index(300000);
  for (auto& i : index) i = pick(rng);
  check_coo<float, int64_t>(device(), index, 1, 2, 1000, 16, 301);
  check_coo<float, int64_t>(device(), index, 1, 2, 1000, 16, 301, /*fresh=*/true);
  check_coo<BFloat16, int64_t>(device(), index, 1, 1, 1000, 1, 302);
  // A shared index over batches whose source rows (400 KB each) do not all fit in
  // cache at once: groups of batches.
  std::uniform_int_distribution<int64_t> wide(0, 99999);
  std::vector<int32_t> shared(50000);
  for (auto& i : shared) i = static_cast<int32_t>(wide(rng));
  check_coo<float, int32_t>(device(), shared, 1, 5, 100000, 1, 307);
  check_coo<double, int32_t>(device(), shared, 1, 3, 100000, 2, 308);
  check_coo<double, int32_t>(device(), shared, 1, 3, 100000, 2, 308, /*fresh=*/true);
  check_coo<float, int64_t>(device(), {0}, 1, 1, 1, 1, 303);             // one element
  check_coo<float, int64_t>(device(), {}, 1, 3, 5, 2, 304);              // E = 0
  check_coo<float, int64_t>(device(), {0, 0, 0}, 1, 0, 0, 2, 305);       // A = 0
  check_coo<float, int32_t>(device(), {4, 4, 4, 0}, 1, 2, 5, 3, 306);    // repeats, any order
}

// Bad input throws naming the argument (and the first bad position); out keeps its bytes.
TEST_P(GatherRowsTest, BadInputNamedOutputUntouched) {
  const Device dev = device();
  const auto values = to_device(std::vector<float>(12, 1.0f), dev);  // A = 2, S = 3, C = 2
  auto out = poisoned<float>(2 * 4 * 2, dev);
  const std::vector<float> before = out.to_host_vector();
  auto csr = [&](std::vector<int64_t> off, int64_t Ao, int64_t A = 2) {
    const auto d_off = to_device(off, dev);
    gather_rows_csr<float>(std::as_const(values).matrix(6, 2),
                           std::as_const(d_off).matrix(Ao, static_cast<int64_t>(off.size()) / Ao), out.matrix(8, 2), A);
  };
  expect_invalid([&] { csr({0, 1, 2, 5}, 1); }, "offsets[0, 3] (5) must lie in [offsets[0, 2] (2), 4]");
  expect_invalid([&] { csr({0, 2, 1, 3}, 1); }, "offsets[0, 2] (1) must lie in [offsets[0, 1] (2), 4]");
  expect_invalid([&] { csr({0, 1, 2, 3, -1, 0, 1, 2}, 2); }, "offsets[1, 0] (-1) must lie in [0, 4]");
  expect_invalid([&] { csr({0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, 3); }, "offsets.rows() (3) must be 1");
  expect_invalid([&] { csr({0, 1, 3}, 1); }, "values.rows() (6) must be batches (2) times offsets.cols() - 1 (2)");
  expect_invalid([&] { csr({0, 1, 2, 3}, 1, 4); }, "must be a multiple of batches (4)");
  expect_invalid([&] { csr({0, 1, 2, 3}, 1, -1); }, "batches (-1) must not be negative");
  auto coo = [&](std::vector<int32_t> index, int64_t Ai, int64_t E) {
    const auto d_index = to_device(index, dev);
    gather_rows_coo<float, int32_t>(std::as_const(values).matrix(6, 2), std::as_const(d_index).matrix(Ai, E),
                                    out.matrix(8, 2), 2);
  };
  expect_invalid([&] { coo({0, 1, 3, 2}, 1, 4); }, "gather_rows_coo: index[2] (3) must lie in [0, 3)");
  expect_invalid([&] { coo({0, 1, 2, 2, 0, 1, -1, 0}, 2, 4); }, "index[6] (-1) must lie in [0, 3)");
  expect_invalid([&] { coo({0, 1}, 1, 2); }, "out.rows() (8) must equal batches (2) times index.cols() (2)");
  // Outputs that overlap an input.
  auto shared = to_device(std::vector<float>(12, 0.0f), dev);
  const auto d_off = to_device(std::vector<int64_t>{0, 1, 2, 3}, dev);
  expect_invalid(
      [&] {
        gather_rows_csr<float>(std::as_const(shared).matrix(6, 2), std::as_const(d_off).matrix(1, 4),
                               shared.matrix(6, 2), 2);
      },
      "out and values overlap");
  EXPECT_TRUE(same_bits(out.to_host_vector(), before));
}

// Into a fresh output the index is checked while copying: the same error, naming the
// first bad position whichever thread met it (large problems, several blocks per
// thread; per-batch and shared index).
TEST(GatherRowsCpu, FreshOutputsCheckTheIndexWhileCopyingAndNameTheFirstBadPosition) {
  const int64_t S = 50, E = 200000, C = 4;
  auto run = [&](std::vector<int64_t> index, int64_t Ai, int64_t A) {
    const auto values = to_device(std::vector<float>(static_cast<size_t>(A * S * C), 1.0f), Device::cpu());
    const auto d_index = to_device(index, Device::cpu());
    auto out = poisoned<float>(A * E * C, Device::cpu());
    Context ctx(Device::cpu());
    ctx.outputs_fresh = true;
    gather_rows_coo<float, int64_t>(std::as_const(values).matrix(A * S, C), std::as_const(d_index).matrix(Ai, E),
                                    out.matrix(A * E, C), A, ctx);
  };
  std::vector<int64_t> index(E, 7);
  index[150000] = 50;
  index[70001] = -3;
  index[190000] = 1000;
  expect_invalid([&] { run(index, 1, 1); }, "gather_rows_coo: index[70001] (-3) must lie in [0, 50)");
  expect_invalid([&] { run(index, 1, 3); }, "index[70001] (-3) must lie in [0, 50)");  // shared by 3 batches
  std::vector<int64_t> per_batch(2 * E, 3);
  per_batch[2 * E - 1] = 50;
  per_batch[E + 5] = 51;
  expect_invalid([&] { run(per_batch, 2, 2); }, "index[200005] (51) must lie in [0, 50)");
  index.assign(E, 49);
  run(index, 1, 1);  // valid: no throw
}

// Blocks own their rows: the result does not depend on the thread count.
TEST(GatherRowsCpu, SameBitsAtAnyThreadCount) {
  auto rng = rng_for(400);
  int64_t M = 0;
  const auto offsets = regime_offsets(rng, Regime::PowerLaw, 1, 1000, 50, 7, M, 11);
  const auto values = random_bits<float>(rng, 1000 * 16);
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    Buffer<float> out = poisoned<float>(M * 16, Device::cpu());
    const auto v = to_device(values, Device::cpu());
    const auto o = to_device(offsets, Device::cpu());
    gather_rows_csr<float>(std::as_const(v).matrix(1000, 16), std::as_const(o).matrix(1, 1001), out.matrix(M, 16));
    omp_set_num_threads(saved);
    return out.to_host_vector();
  };
  EXPECT_TRUE(same_bits(run(1), run(3)));
}

INSTANTIATE_TEST_SUITE_P(Devices, GatherRowsTest, testing::ValuesIn(all_devices()), device_name);

}  // namespace
}  // namespace edgewise::test
