// Runtime ISA dispatch: every level this build and CPU support gives identical
// results for the dispatched kernels (sort_by_key, run_length_encode), equal to a
// sequential reference; forcing an unsupported level or an unknown name is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "edgewise/kernels/cpu_isa.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "edgewise/kernels/sort_by_key.hpp"

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
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512}) {
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

TEST(CpuIsa, NamesRoundTripAndUnknownNamesAreRefused) {
  for (CpuIsa level : {CpuIsa::Baseline, CpuIsa::Avx2, CpuIsa::Avx512})
    EXPECT_EQ(parse_cpu_isa(to_string(level)), level);
  EXPECT_THROW(parse_cpu_isa("sse2"), std::invalid_argument);
}

}  // namespace
}  // namespace edgewise::test
