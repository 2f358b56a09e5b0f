// sort_by_key against the stable-sort oracle: every key type, boundary sizes, key
// distributions that take each radix path, extremes, the values form, stability as
// a property, thread-count independence, bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <typeinfo>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "sort_by_key_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using SortByKeyTest = DeviceTest;

const int64_t kSizes[] = {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257, 1000, 20000, 70001};

template <class K>
struct Sorted {
  std::vector<K> keys;
  std::vector<int64_t> permutation;
};

// Runs sort_by_key on `device` with poisoned outputs.
template <class K>
Sorted<K> run_sort(Device device, const std::vector<K>& keys) {
  const int64_t n = static_cast<int64_t>(keys.size());
  auto d_keys = to_device(keys, device);
  auto d_sorted = poisoned<K>(n, device);
  auto d_perm = poisoned<int64_t>(n, device);
  Context ctx(device);
  sort_by_key<K>(d_keys.view(), d_sorted.view(), d_perm.view(), ctx);
  return {d_sorted.to_host_vector(), d_perm.to_host_vector()};
}

// Uniform keys in [lo, hi] (as int64 / uint64 arithmetic allows).
template <class K>
std::vector<K> uniform_keys(std::mt19937_64& rng, int64_t n, K lo, K hi) {
  std::vector<K> keys(static_cast<size_t>(n));
  if constexpr (std::is_same_v<K, uint32_t>) {
    std::uniform_int_distribution<uint32_t> d(lo, hi);
    for (auto& k : keys) k = d(rng);
  } else {
    std::uniform_int_distribution<int64_t> d(lo, hi);
    for (auto& k : keys) k = static_cast<K>(d(rng));
  }
  return keys;
}

// Stability and permutation, checked without the oracle.
template <class K>
::testing::AssertionResult is_stable_sort_of(const std::vector<K>& input, const Sorted<K>& s) {
  const size_t n = input.size();
  if (s.keys.size() != n || s.permutation.size() != n) return ::testing::AssertionFailure() << "wrong sizes";
  std::vector<char> seen(n, 0);
  for (size_t j = 0; j < n; ++j) {
    const int64_t p = s.permutation[j];
    if (p < 0 || p >= static_cast<int64_t>(n) || seen[p]++)
      return ::testing::AssertionFailure() << "permutation[" << j << "] = " << p << " is not a permutation entry";
    if (input[p] != s.keys[j]) return ::testing::AssertionFailure() << "sorted_keys[" << j << "] != keys[perm]";
    if (j > 0 && s.keys[j] < s.keys[j - 1]) return ::testing::AssertionFailure() << "not sorted at " << j;
    if (j > 0 && s.keys[j] == s.keys[j - 1] && p < s.permutation[j - 1])
      return ::testing::AssertionFailure() << "unstable at " << j;
  }
  return ::testing::AssertionSuccess();
}

template <class K>
void expect_matches_reference(Device device, const std::vector<K>& keys, const std::string& label) {
  SCOPED_TRACE(label + " n=" + std::to_string(keys.size()));
  const auto ref = reference::sort_by_key_ref(keys);
  const auto got = run_sort(device, keys);
  EXPECT_TRUE(equal_exactly(got.keys, ref.keys)) << "(sorted keys)";
  EXPECT_TRUE(equal_exactly(got.permutation, ref.permutation)) << "(permutation)";
  EXPECT_TRUE(is_stable_sort_of(keys, got));
}

template <class K>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const K lowest = std::numeric_limits<K>::lowest(), highest = std::numeric_limits<K>::max();
  for (int64_t n : kSizes) {
    expect_matches_reference(device, uniform_keys<K>(rng, n, 0, 9), "few distinct (many ties)");
    expect_matches_reference(device, uniform_keys<K>(rng, n, 0, 999999), "ids below 2^20");
    expect_matches_reference(device, uniform_keys<K>(rng, n, lowest, highest), "full range");
    if constexpr (std::is_signed_v<K>) {
      expect_matches_reference(device, uniform_keys<K>(rng, n, -1000, 1000), "negative and positive");
      expect_matches_reference(device, uniform_keys<K>(rng, n, -100, -50), "negative only");
    }
  }
}

TEST_P(SortByKeyTest, UInt32MatchesStableSort) { sweep<uint32_t>(device(), 11); }
TEST_P(SortByKeyTest, Int32MatchesStableSort) { sweep<int32_t>(device(), 12); }
TEST_P(SortByKeyTest, Int64MatchesStableSort) { sweep<int64_t>(device(), 13); }

// Keys whose varying bits sit high above a constant part (common bits restored on
// output), and widths either side of "key field + index fit in one 64-bit word".
TEST_P(SortByKeyTest, VaryingBitWidthsAroundTheOneWordLimit) {
  auto rng = rng_for(14);
  const int64_t n = 20000;  // 15 index bits: a 49-bit field still fits one word, 50 does not
  for (int bits : {1, 2, 11, 12, 20, 33, 48, 49, 50, 63, 64}) {
    std::vector<int64_t> keys(n);
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (auto& k : keys) k = static_cast<int64_t>(rng() & mask);
    keys[0] = 0;
    keys[1] = static_cast<int64_t>(mask);  // both ends: exactly `bits` bits vary
    expect_matches_reference(device(), keys, "bits=" + std::to_string(bits));
    if (bits <= 56) {
      for (auto& k : keys) k |= int64_t{0x5A} << 56;  // a constant high byte
      expect_matches_reference(device(), keys, "bits=" + std::to_string(bits) + " below a constant high byte");
    }
  }
  std::vector<int64_t> shifted(n);
  for (auto& k : shifted) k = static_cast<int64_t>(rng() % 1000) << 30;  // varying bits [30, 40): low bits constant
  expect_matches_reference(device(), shifted, "low bits constant");
}

// Large inputs: one pass on the top digit, then each bucket by the low digits, in
// one thread's cache or, for a big bucket, with all threads.
TEST_P(SortByKeyTest, LargeInputsAcrossBucketSizes) {
  auto rng = rng_for(17);
  const int64_t n = 300000;
  expect_matches_reference(device(), uniform_keys<int64_t>(rng, n, 0, (1 << 20) - 1), "20 bits: one low pass");
  expect_matches_reference(device(), uniform_keys<int64_t>(rng, n, 0, (int64_t{1} << 40) - 1),
                           "40 bits: several low passes");
  expect_matches_reference(device(), uniform_keys<int32_t>(rng, n, -(1 << 30), 1 << 30), "int32, negative too");
  expect_matches_reference(device(), uniform_keys<int64_t>(rng, n, std::numeric_limits<int64_t>::lowest(),
                                                           std::numeric_limits<int64_t>::max()),
                           "full-range int64 pairs");
  // Skew: most keys share the top digit (a big bucket sorted by all threads), the
  // rest spread out; and a few tiny buckets (0 and 1 items).
  auto skewed = uniform_keys<int64_t>(rng, n, 0, (1 << 22) - 1);
  for (int64_t i = 0; i < n; i += 3) skewed[i] = 5000 + static_cast<int64_t>(rng() % 2000);
  for (int64_t i = 0; i < n; i += 7) skewed[i] = 5000 + static_cast<int64_t>(rng() % 2000) + (int64_t{1} << 30);
  skewed[17] = int64_t{1} << 34;
  expect_matches_reference(device(), skewed, "skewed top digit, 35 bits");
  auto hub = uniform_keys<uint32_t>(rng, n, 0, 99999);
  for (int64_t i = 0; i < n; i += 2) hub[i] = 4242;  // one hub holds half the keys
  expect_matches_reference(device(), hub, "one hub");
  const int saved = omp_get_max_threads();
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    expect_matches_reference(device(), skewed, "skewed, threads=" + std::to_string(threads));
  }
  omp_set_num_threads(saved);
}

TEST_P(SortByKeyTest, ExtremesAndDegenerateInputs) {
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  expect_matches_reference(device(), std::vector<int64_t>{hi, lo, 0, -1, 1, lo, hi, -1}, "int64 extremes");
  const int32_t lo32 = std::numeric_limits<int32_t>::min(), hi32 = std::numeric_limits<int32_t>::max();
  expect_matches_reference(device(), std::vector<int32_t>{hi32, lo32, 0, -1, 1, lo32}, "int32 extremes");
  expect_matches_reference(device(), std::vector<uint32_t>{0xFFFFFFFFu, 0, 0x80000000u, 0x7FFFFFFFu, 0},
                           "uint32 extremes");
  const auto equal = run_sort(device(), std::vector<int64_t>(50000, -7));
  std::vector<int64_t> identity(50000);
  for (int64_t i = 0; i < 50000; ++i) identity[i] = i;
  EXPECT_TRUE(equal_exactly(equal.permutation, identity)) << "all keys equal: the identity";
  EXPECT_TRUE(equal_exactly(equal.keys, std::vector<int64_t>(50000, -7)));
  const auto one = run_sort(device(), std::vector<int32_t>{42});
  EXPECT_EQ(one.keys, std::vector<int32_t>{42});
  EXPECT_EQ(one.permutation, std::vector<int64_t>{0});
  std::vector<uint32_t> descending(3000);
  for (uint32_t i = 0; i < 3000; ++i) descending[i] = 3000 - i / 2;
  expect_matches_reference(device(), descending, "descending pairs");
}

TEST_P(SortByKeyTest, InputAlreadyInOrderAndOneDescentAway) {
  // In order already: the identity (the scan that sees this skips every pass); one key
  // out of place anywhere, a chunk boundary of the scan included, must still sort.
  auto rng = rng_for(21);
  for (int64_t n : {int64_t{2}, int64_t{1000}, int64_t{200003}}) {
    std::vector<int64_t> keys = uniform_keys<int64_t>(rng, n, -5000, 5000);
    std::sort(keys.begin(), keys.end());
    const auto in_order = run_sort(device(), keys);
    std::vector<int64_t> identity(static_cast<size_t>(n));
    std::iota(identity.begin(), identity.end(), int64_t{0});
    EXPECT_TRUE(equal_exactly(in_order.permutation, identity)) << "n=" << n << ": sorted input, the identity";
    EXPECT_TRUE(equal_exactly(in_order.keys, keys));
    for (int64_t at : {n - 1, n / 2, int64_t{1}}) {
      std::vector<int64_t> off = keys;
      off[static_cast<size_t>(at)] = off[static_cast<size_t>(at - 1)] - 1;
      expect_matches_reference(device(), off, "one descent at " + std::to_string(at));
    }
  }
}

template <class V>
void expect_values_form(Device device, const std::vector<int64_t>& keys, std::mt19937_64& rng) {
  SCOPED_TRACE(std::string("values ") + typeid(V).name());
  const auto values = random_values<V>(rng, static_cast<int64_t>(keys.size()), -1e6, 1e6);
  const auto ref = reference::sort_by_key_ref(keys);
  std::vector<V> expected;
  for (int64_t p : ref.permutation) expected.push_back(values[p]);
  auto d_keys = to_device(keys, device);
  auto d_values = to_device(values, device);
  auto d_sorted = poisoned<int64_t>(static_cast<int64_t>(keys.size()), device);
  auto d_out = poisoned<V>(static_cast<int64_t>(keys.size()), device);
  Context ctx(device);
  sort_by_key<int64_t, V>(d_keys.view(), d_values.view(), d_sorted.view(), d_out.view(), ctx);
  EXPECT_TRUE(equal_exactly(d_sorted.to_host_vector(), ref.keys));
  EXPECT_TRUE(equal_exactly(d_out.to_host_vector(), expected));
}

TEST_P(SortByKeyTest, ValuesFormCarriesCallerValues) {
  auto rng = rng_for(15);
  for (int64_t n : {0, 1, 33, 20000}) {
    const auto keys = uniform_keys<int64_t>(rng, n, 0, 300);
    expect_values_form<int32_t>(device(), keys, rng);
    expect_values_form<uint32_t>(device(), keys, rng);
    expect_values_form<int64_t>(device(), keys, rng);
    expect_values_form<float>(device(), keys, rng);
    expect_values_form<double>(device(), keys, rng);
  }
  expect_values_form<float>(device(), std::vector<int64_t>(100, 3), rng);  // all equal: values unchanged
  // Values travel bit for bit, NaN payloads included.
  const std::vector<int32_t> keys = {2, 1, 2, 0};
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {nan, -0.0f, 1.0f, std::numeric_limits<float>::infinity()};
  auto d_keys = to_device(keys, device());
  auto d_values = to_device(values, device());
  auto d_sorted = poisoned<int32_t>(4, device());
  auto d_out = poisoned<float>(4, device());
  sort_by_key<int32_t, float>(d_keys.view(), d_values.view(), d_sorted.view(), d_out.view());
  const auto out = d_out.to_host_vector();
  EXPECT_EQ(out[0], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(out[1]) && out[1] == 0.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.0f);
}

// The stable order is unique, so the thread count cannot change it.
TEST_P(SortByKeyTest, SameResultAtEveryThreadCount) {
  auto rng = rng_for(16);
  const auto keys = uniform_keys<int64_t>(rng, 100000, 0, 5000);
  const int saved = omp_get_max_threads();
  std::vector<Sorted<int64_t>> results;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    results.push_back(run_sort(device(), keys));
  }
  omp_set_num_threads(saved);
  for (size_t i = 1; i < results.size(); ++i) {
    EXPECT_EQ(results[i].permutation, results[0].permutation) << "run " << i;
    EXPECT_EQ(results[i].keys, results[0].keys) << "run " << i;
  }
}

TEST_P(SortByKeyTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto keys = to_device(std::vector<int64_t>{3, 1, 2}, dev);
  auto sorted = poisoned<int64_t>(3, dev);
  auto perm = poisoned<int64_t>(3, dev);
  auto short_out = poisoned<int64_t>(2, dev);
  struct Case {
    VectorView<int64_t> sorted, perm;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {short_out.view(), perm.view(), "sorted_keys.size() (2) must equal keys.size() (3)"},
      {sorted.view(), short_out.view(), "permutation.size() (2) must equal keys.size() (3)"},
      {sorted.view(), sorted.view(), "permutation and sorted_keys overlap"},
      {VectorView<int64_t>(nullptr, 3, dev), perm.view(), "sorted_keys is null but has 3 elements"},
  };
  for (const Case& c : cases) {
    Context ctx(dev);
    try {
      sort_by_key<int64_t>(keys.view(), c.sorted, c.perm, ctx);
      ADD_FAILURE() << "no error for '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("sort_by_key"), std::string::npos) << e.what();
    }
    for (auto* b : {&sorted, &perm, &short_out}) {
      for (int64_t v : b->to_host_vector()) EXPECT_EQ(v, -1) << "an output changed for '" << c.needle << "'";
    }
  }
  // In place is rejected too: the input would be overwritten while read.
  auto mutable_keys = to_device(std::vector<int64_t>{3, 1, 2}, dev);
  EXPECT_THROW(sort_by_key<int64_t>(mutable_keys.view(), mutable_keys.view(), perm.view()), std::invalid_argument);
  EXPECT_EQ(mutable_keys.to_host_vector(), (std::vector<int64_t>{3, 1, 2}));
  auto values = to_device(std::vector<float>{1, 2, 3}, dev);
  auto short_values = poisoned<float>(2, dev);
  EXPECT_THROW((sort_by_key<int64_t, float>(keys.view(), values.view(), sorted.view(), short_values.view())),
               std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(Devices, SortByKeyTest, testing::ValuesIn(all_devices()), device_name);

TEST(SortByKeyDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<int32_t> keys = {2, 1};
  std::vector<int32_t> sorted(2, -1);
  std::vector<int64_t> perm(2, -1);
  Context cuda_ctx(Device::cuda(0));
  try {
    sort_by_key<int32_t>(VectorView<const int32_t>(keys.data(), 2), VectorView<int32_t>(sorted.data(), 2),
                         VectorView<int64_t>(perm.data(), 2), cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("keys is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(sorted, (std::vector<int32_t>{-1, -1}));
}

}  // namespace
}  // namespace edgewise::test
