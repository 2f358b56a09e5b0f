// offsets_from_keys against the counting oracle: key types, boundary sizes, segment
// regimes (empty segments, one hub, all keys in the last segment), the graph
// construction path (sort_by_key -> offsets_from_keys, consistent with RLE), bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "offsets_from_keys_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using OffsetsFromKeysTest = DeviceTest;

template <class K>
std::vector<int64_t> run_offsets(Device device, const std::vector<K>& keys, int64_t segments) {
  auto d_keys = to_device(keys, device);
  auto d_offsets = poisoned<int64_t>(segments + 1, device);
  Context ctx(device);
  offsets_from_keys<K>(d_keys.view(), d_offsets.view(), ctx);
  return d_offsets.to_host_vector();
}

// Sorted keys with the given segment lengths.
template <class K>
std::vector<K> keys_from_lengths(const std::vector<int64_t>& lengths) {
  std::vector<K> keys;
  for (size_t s = 0; s < lengths.size(); ++s) keys.insert(keys.end(), static_cast<size_t>(lengths[s]), static_cast<K>(s));
  return keys;
}

template <class K>
void expect_matches_reference(Device device, const std::vector<K>& keys, int64_t segments, const std::string& label) {
  SCOPED_TRACE(label + " E=" + std::to_string(keys.size()) + " S=" + std::to_string(segments));
  const auto got = run_offsets(device, keys, segments);
  EXPECT_TRUE(equal_exactly(got, reference::offsets_from_keys_ref(keys, segments)));
}

template <class K>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const Regime regimes[] = {Regime::Uniform,  Regime::AllEmpty, Regime::AllSingleton,
                            Regime::OneHub,   Regime::PowerLaw, Regime::SparseEmpty};
  for (Regime regime : regimes) {
    for (int64_t S : {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257, 4000}) {
      for (int64_t mean : {1, 5, 40}) {
        const auto keys = keys_from_lengths<K>(segment_lengths(rng, regime, S, mean));
        expect_matches_reference(device, keys, S, regime_name(regime));
      }
    }
  }
  // Large enough for every CPU thread to take a slice; skew in both directions.
  expect_matches_reference(device, keys_from_lengths<K>(segment_lengths(rng, Regime::PowerLaw, 50000, 6)), 50000,
                           "power-law, parallel");
  expect_matches_reference(device, std::vector<K>(200000, K(0)), 100000, "every key in segment 0");
  expect_matches_reference(device, std::vector<K>(200000, K(99999)), 100000, "every key in the last segment");
  expect_matches_reference(device, std::vector<K>{}, 300000, "no keys, many segments");
  std::vector<K> sparse = {0, 0, 1000, 77777, 77777, 299999};
  expect_matches_reference(device, sparse, 300000, "few keys, long runs of empty segments");
}

TEST_P(OffsetsFromKeysTest, Int32MatchesCountingReference) { sweep<int32_t>(device(), 31); }
TEST_P(OffsetsFromKeysTest, Int64MatchesCountingReference) { sweep<int64_t>(device(), 32); }
TEST_P(OffsetsFromKeysTest, UInt32MatchesCountingReference) { sweep<uint32_t>(device(), 33); }

TEST_P(OffsetsFromKeysTest, EmptySegmentsAndDegenerateShapes) {
  EXPECT_EQ(run_offsets<int64_t>(device(), {1, 1, 3}, 5), (std::vector<int64_t>{0, 0, 2, 2, 3, 3}));
  EXPECT_EQ(run_offsets<int64_t>(device(), {}, 0), (std::vector<int64_t>{0})) << "S = 0, E = 0";
  EXPECT_EQ(run_offsets<int64_t>(device(), {}, 3), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(run_offsets<int32_t>(device(), {0}, 1), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(run_offsets<uint32_t>(device(), {2}, 3), (std::vector<int64_t>{0, 0, 0, 1}));
}

// The path Graph construction takes: random COO destinations -> stable sort ->
// offsets, which must match counting, and the nonempty segments' lengths must be
// the RLE lengths of the sorted keys.
TEST_P(OffsetsFromKeysTest, GraphConstructionPathAgreesWithRunLengths) {
  auto rng = rng_for(34);
  const int64_t E = 100000, S = 20000;
  std::vector<int64_t> dst(E);
  std::uniform_int_distribution<int64_t> node(0, S - 1);
  for (auto& d : dst) d = node(rng) % (node(rng) + 1);  // skewed toward small ids
  auto d_dst = to_device(dst, device());
  auto d_sorted = poisoned<int64_t>(E, device());
  auto d_perm = poisoned<int64_t>(E, device());
  auto d_offsets = poisoned<int64_t>(S + 1, device());
  auto d_values = poisoned<int64_t>(E, device());
  auto d_lengths = poisoned<int64_t>(E, device());
  Context ctx(device());
  sort_by_key<int64_t>(d_dst.view(), d_sorted.view(), d_perm.view(), ctx);
  offsets_from_keys<int64_t>(d_sorted.view(), d_offsets.view(), ctx);
  const int64_t runs = run_length_encode<int64_t>(d_sorted.view(), d_values.view(), d_lengths.view(), ctx);
  const auto offsets = d_offsets.to_host_vector();
  EXPECT_TRUE(equal_exactly(offsets, reference::offsets_from_keys_ref(dst, S)));
  const auto values = d_values.to_host_vector();
  const auto lengths = d_lengths.to_host_vector();
  int64_t nonempty = 0;
  for (int64_t s = 0; s < S; ++s) {
    const int64_t length = offsets[s + 1] - offsets[s];
    if (length == 0) continue;
    ASSERT_LT(nonempty, runs);
    EXPECT_EQ(values[nonempty], s);
    EXPECT_EQ(lengths[nonempty], length) << "segment " << s;
    ++nonempty;
  }
  EXPECT_EQ(nonempty, runs);
}

TEST_P(OffsetsFromKeysTest, BadKeysThrowNamingThePositionAndLeaveOffsetsUntouched) {
  const Device dev = device();
  struct Case {
    std::vector<int64_t> keys;
    int64_t segments;
    std::string needle;
  };
  std::vector<int64_t> long_unsorted(100000, 5);
  long_unsorted[77777] = 4;
  const std::vector<Case> cases = {
      {{0, 1, 7, 3, 9}, 10, "keys[3] (3) is less than keys[2] (7): keys must be sorted (nondecreasing)"},
      {{0, 1, 10}, 10, "keys[2] (10) must lie in [0, 10)"},
      {{-1, 0}, 10, "keys[0] (-1) must lie in [0, 10)"},
      {{0, 5, 2, 12}, 10, "keys[2] (2) is less than keys[1] (5)"},
      {{3}, 0, "keys[0] (3) must lie in [0, 0)"},
      {long_unsorted, 10, "keys[77777] (4) is less than keys[77776] (5)"},
      {{std::numeric_limits<int64_t>::min()}, 3, "keys[0] (-9223372036854775808) must lie in [0, 3)"},
  };
  for (const Case& c : cases) {
    auto keys = to_device(c.keys, dev);
    auto offsets = poisoned<int64_t>(c.segments + 1, dev);
    Context ctx(dev);
    try {
      offsets_from_keys<int64_t>(keys.view(), offsets.view(), ctx);
      ADD_FAILURE() << "no error for '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("offsets_from_keys: ", 0), 0u) << e.what();
    }
    for (int64_t v : offsets.to_host_vector()) EXPECT_EQ(v, -1) << "offsets changed for '" << c.needle << "'";
  }
  auto keys = to_device(std::vector<uint32_t>{0, 4000000000u}, dev);
  auto offsets = poisoned<int64_t>(4, dev);
  EXPECT_THROW(offsets_from_keys<uint32_t>(keys.view(), offsets.view()), std::invalid_argument);
  auto no_offsets = poisoned<int64_t>(0, dev);
  try {
    offsets_from_keys<uint32_t>(keys.view(), no_offsets.view());
    ADD_FAILURE() << "no error for empty offsets";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("offsets.size() (0) must be at least 1"), std::string::npos) << e.what();
  }
}

// Without validation the hot path trusts the keys; bad keys then give meaningless
// offsets but no access outside the views (the walk is bounded by construction).
TEST_P(OffsetsFromKeysTest, ValidationOffTrustsTheKeys) {
  auto keys = to_device(std::vector<int32_t>{0, 2, 2, 3}, device());
  auto offsets = poisoned<int64_t>(5, device());
  Context ctx(device());
  ctx.validate = false;
  offsets_from_keys<int32_t>(keys.view(), offsets.view(), ctx);
  EXPECT_EQ(offsets.to_host_vector(), (std::vector<int64_t>{0, 1, 1, 3, 4}));
  auto bad = to_device(std::vector<int32_t>{9, -4, 100, 1, 0}, device());
  offsets_from_keys<int32_t>(bad.view(), offsets.view(), ctx);  // must not crash
  const auto out = offsets.to_host_vector();
  EXPECT_EQ(out.size(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Devices, OffsetsFromKeysTest, testing::ValuesIn(all_devices()), device_name);

TEST(OffsetsFromKeysDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<int64_t> keys = {0, 1};
  std::vector<int64_t> offsets(3, -1);
  Context cuda_ctx(Device::cuda(0));
  try {
    offsets_from_keys<int64_t>(VectorView<const int64_t>(keys.data(), 2), VectorView<int64_t>(offsets.data(), 3),
                               cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("keys is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(offsets, (std::vector<int64_t>{-1, -1, -1}));
}

}  // namespace
}  // namespace edgewise::test
