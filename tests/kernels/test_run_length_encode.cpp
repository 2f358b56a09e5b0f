// run_length_encode / unique against the sequential oracle: every key type,
// boundary sizes, adjacent-run semantics, chunk seams (empty chunks, runs spanning
// many chunks), the round trip decode(RLE(x)) == x, unique == RLE values, capacity
// contract (only the prefix is written), bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <limits>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/run_length_encode.hpp"
#include "run_length_encode_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using RunLengthEncodeTest = DeviceTest;

const int64_t kSizes[] = {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257, 5000, 70001};

template <class K>
struct Encoded {
  int64_t count = 0;
  std::vector<K> values;        // the whole capacity buffer
  std::vector<int64_t> lengths; // the whole capacity buffer
  std::vector<K> unique_values; // unique() into its own capacity buffer
  int64_t unique_count = 0;
};

// Runs run_length_encode and unique over `chunks` on `device`, outputs poisoned,
// with `extra` capacity beyond the reference run count.
template <class K>
Encoded<K> run_encode(Device device, const std::vector<std::vector<K>>& chunks, int64_t capacity) {
  std::vector<Buffer<K>> buffers;
  std::vector<VectorView<const K>> views;
  for (const auto& c : chunks) {
    buffers.push_back(to_device(c, device));
    views.push_back(buffers.back().view());
  }
  auto d_values = poisoned<K>(capacity, device);
  auto d_lengths = poisoned<int64_t>(capacity, device);
  auto d_unique = poisoned<K>(capacity, device);
  Context ctx(device);
  Encoded<K> e;
  e.count = run_length_encode<K>(std::span<const VectorView<const K>>(views), d_values.view(), d_lengths.view(), ctx);
  e.unique_count = unique<K>(std::span<const VectorView<const K>>(views), d_unique.view(), ctx);
  e.values = d_values.to_host_vector();
  e.lengths = d_lengths.to_host_vector();
  e.unique_values = d_unique.to_host_vector();
  return e;
}

template <class T>
std::vector<T> prefix(const std::vector<T>& v, int64_t n) {
  return std::vector<T>(v.begin(), v.begin() + std::min<int64_t>(n, static_cast<int64_t>(v.size())));
}

template <class T>
bool all_poisoned(const std::vector<T>& v, int64_t from) {
  std::vector<T> poison(1);
  std::memset(poison.data(), 0xFF, sizeof(T));
  for (size_t i = static_cast<size_t>(from); i < v.size(); ++i) {
    if (v[i] != poison[0]) return false;
  }
  return true;
}

template <class K>
void expect_matches_reference(Device device, const std::vector<std::vector<K>>& chunks, const std::string& label,
                              int64_t spare = 3) {
  SCOPED_TRACE(label + " chunks=" + std::to_string(chunks.size()));
  const auto ref = reference::run_length_encode_ref(chunks);
  const int64_t runs = static_cast<int64_t>(ref.values.size());
  const auto got = run_encode(device, chunks, runs + spare);
  ASSERT_EQ(got.count, runs);
  EXPECT_TRUE(equal_exactly(prefix(got.values, runs), ref.values)) << "(values)";
  EXPECT_TRUE(equal_exactly(prefix(got.lengths, runs), ref.lengths)) << "(lengths)";
  EXPECT_TRUE(all_poisoned(got.values, runs) && all_poisoned(got.lengths, runs))
      << "only the prefix named by the count may be written";
  // Properties, each without the oracle: the decoding is the input; unique is the
  // value column of the encoding.
  std::vector<K> flat;
  for (const auto& c : chunks) flat.insert(flat.end(), c.begin(), c.end());
  EXPECT_TRUE(equal_exactly(reference::run_length_decode_ref(got.values, got.lengths, got.count), flat))
      << "decode(RLE(x)) != x";
  EXPECT_EQ(got.unique_count, got.count);
  EXPECT_TRUE(equal_exactly(prefix(got.unique_values, got.unique_count), prefix(got.values, got.count)))
      << "unique != RLE values";
  EXPECT_TRUE(all_poisoned(got.unique_values, got.unique_count));
}

template <class K>
void expect_matches_reference(Device device, const std::vector<K>& keys, const std::string& label) {
  expect_matches_reference(device, std::vector<std::vector<K>>{keys}, label);
}

template <class K>
std::vector<K> sorted_keys(std::mt19937_64& rng, int64_t n, int64_t distinct) {
  auto keys = random_values<K>(rng, n, 0, static_cast<double>(distinct));
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Splits `keys` into random chunks, about a third of them empty.
template <class K>
std::vector<std::vector<K>> random_chunks(std::mt19937_64& rng, const std::vector<K>& keys, int64_t mean_chunk) {
  std::vector<std::vector<K>> chunks;
  std::uniform_int_distribution<int64_t> len(1, 2 * mean_chunk);
  std::bernoulli_distribution empty(0.33);
  size_t i = 0;
  while (i < keys.size()) {
    if (empty(rng)) chunks.emplace_back();
    const size_t take = std::min(keys.size() - i, static_cast<size_t>(len(rng)));
    chunks.emplace_back(keys.begin() + i, keys.begin() + i + take);
    i += take;
  }
  if (empty(rng)) chunks.emplace_back();
  return chunks;
}

template <class K>
void sweep(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  for (int64_t n : kSizes) {
    const std::string size = " n=" + std::to_string(n);
    expect_matches_reference(device, sorted_keys<K>(rng, n, 1 + n / 4), "sorted with duplicates" + size);
    expect_matches_reference(device, random_values<K>(rng, n, 0, 3), "unsorted, few distinct" + size);
    std::vector<K> distinct(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) distinct[i] = static_cast<K>(i * 3);
    expect_matches_reference(device, distinct, "all distinct" + size);
    expect_matches_reference(device, std::vector<K>(static_cast<size_t>(n), K(7)), "all equal" + size);
    const auto keys = sorted_keys<K>(rng, n, 1 + n / 16);
    expect_matches_reference(device, random_chunks(rng, keys, 7), "chunked small" + size);
    expect_matches_reference(device, random_chunks(rng, keys, 3000), "chunked large" + size);
  }
}

TEST_P(RunLengthEncodeTest, UInt32MatchesReference) { sweep<uint32_t>(device(), 21); }
TEST_P(RunLengthEncodeTest, Int32MatchesReference) { sweep<int32_t>(device(), 22); }
TEST_P(RunLengthEncodeTest, Int64MatchesReference) { sweep<int64_t>(device(), 23); }

TEST_P(RunLengthEncodeTest, AdjacentRunsNotGlobalUniqueness) {
  const std::vector<int32_t> keys = {2, 2, 2, 5, 5, 9, 9, 9, 9};
  const auto got = run_encode(device(), std::vector<std::vector<int32_t>>{keys}, 3);
  EXPECT_EQ(got.count, 3);
  EXPECT_EQ(got.values, (std::vector<int32_t>{2, 5, 9}));
  EXPECT_EQ(got.lengths, (std::vector<int64_t>{3, 2, 4}));
  const auto unsorted = run_encode(device(), std::vector<std::vector<int32_t>>{{2, 2, 5, 2}}, 3);
  EXPECT_EQ(unsorted.count, 3) << "[2, 2, 5, 2] has three runs";
  EXPECT_EQ(unsorted.values, (std::vector<int32_t>{2, 5, 2}));
  EXPECT_EQ(unsorted.lengths, (std::vector<int64_t>{2, 1, 1}));
}

TEST_P(RunLengthEncodeTest, RunsContinueAcrossSeamsAndEmptyChunks) {
  using V = std::vector<int64_t>;
  // One run of 7s spanning five chunks with empty chunks between; a seam between
  // different keys; empty chunks first and last.
  const std::vector<V> chunks = {{}, {1, 7}, {}, {7}, {}, {}, {7, 7}, {7}, {8}, {}, {8, 9}, {}};
  const auto got = run_encode(device(), chunks, 4);
  ASSERT_EQ(got.count, 4);
  EXPECT_EQ(got.values, (V{1, 7, 8, 9}));
  EXPECT_EQ(got.lengths, (V{1, 5, 2, 1}));
  expect_matches_reference(device(), chunks, "hand-made seams");
  // Extremes across seams.
  const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  expect_matches_reference(device(), std::vector<V>{{lo, lo}, {}, {lo, hi}, {hi}, {-1}, {-1, 0}}, "int64 extremes");
  expect_matches_reference(device(), std::vector<std::vector<uint32_t>>{{0xFFFFFFFFu}, {0xFFFFFFFFu, 0}, {0}},
                           "uint32 extremes");
}

// Long runs across the CPU's parallel block seams and one run over everything.
TEST_P(RunLengthEncodeTest, LongRunsAcrossParallelBlocks) {
  auto rng = rng_for(24);
  const int64_t n = 300000;
  std::vector<int32_t> keys(n, 4);
  for (int64_t i = 0; i < 1000; ++i) keys[i] = static_cast<int32_t>(i);  // 1000 short runs, then one long run
  expect_matches_reference(device(), keys, "one long tail run");
  expect_matches_reference(device(), std::vector<int32_t>(n, -3), "one run over everything");
  expect_matches_reference(device(), random_chunks(rng, std::vector<int32_t>(n, -3), 50000), "one run, chunked");
  auto many = sorted_keys<int32_t>(rng, n, 20);
  expect_matches_reference(device(), random_chunks(rng, many, 40000), "few long runs, chunked");
  const int saved = omp_get_max_threads();
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    expect_matches_reference(device(), random_chunks(rng, many, 20000), "threads=" + std::to_string(threads));
  }
  omp_set_num_threads(saved);
}

TEST_P(RunLengthEncodeTest, EmptyInputReturnsZeroAndWritesNothing) {
  const auto none = run_encode(device(), std::vector<std::vector<int64_t>>{}, 2);
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.unique_count, 0);
  EXPECT_TRUE(all_poisoned(none.values, 0) && all_poisoned(none.lengths, 0) && all_poisoned(none.unique_values, 0));
  const auto empties = run_encode(device(), std::vector<std::vector<int64_t>>{{}, {}, {}}, 2);
  EXPECT_EQ(empties.count, 0);
  EXPECT_TRUE(all_poisoned(empties.values, 0) && all_poisoned(empties.lengths, 0));
  // Zero capacity is enough for empty input; single-vector overloads too.
  Context ctx(device());
  EXPECT_EQ(run_length_encode<int32_t>(VectorView<const int32_t>(nullptr, 0, device()),
                                       VectorView<int32_t>(nullptr, 0, device()),
                                       VectorView<int64_t>(nullptr, 0, device()), ctx),
            0);
  EXPECT_EQ(unique<int32_t>(VectorView<const int32_t>(nullptr, 0, device()), VectorView<int32_t>(nullptr, 0, device()),
                            ctx),
            0);
}

TEST_P(RunLengthEncodeTest, SingleVectorOverloadsAndExactCapacity) {
  auto rng = rng_for(25);
  const auto keys = sorted_keys<int64_t>(rng, 1000, 100);
  const auto ref = reference::run_length_encode_ref(keys);
  const int64_t runs = static_cast<int64_t>(ref.values.size());
  auto d_keys = to_device(keys, device());
  auto values = poisoned<int64_t>(runs, device());
  auto lengths = poisoned<int64_t>(runs, device());
  EXPECT_EQ(run_length_encode<int64_t>(d_keys.view(), values.view(), lengths.view()), runs);
  EXPECT_EQ(values.to_host_vector(), ref.values);
  EXPECT_EQ(lengths.to_host_vector(), ref.lengths);
  auto uvalues = poisoned<int64_t>(runs, device());
  EXPECT_EQ(unique<int64_t>(d_keys.view(), uvalues.view()), runs);
  EXPECT_EQ(uvalues.to_host_vector(), ref.values);
}

TEST_P(RunLengthEncodeTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto keys = to_device(std::vector<int32_t>{1, 1, 2, 3, 3, 4}, dev);  // 4 runs
  auto a = to_device(std::vector<int32_t>{5, 5}, dev);
  auto b = to_device(std::vector<int32_t>{6}, dev);
  auto values = poisoned<int32_t>(4, dev);
  auto small_values = poisoned<int32_t>(3, dev);
  auto lengths = poisoned<int64_t>(4, dev);
  auto small_lengths = poisoned<int64_t>(2, dev);
  auto check_untouched = [&](const std::string& what) {
    EXPECT_TRUE(all_poisoned(values.to_host_vector(), 0) && all_poisoned(small_values.to_host_vector(), 0) &&
                all_poisoned(lengths.to_host_vector(), 0) && all_poisoned(small_lengths.to_host_vector(), 0))
        << "an output changed for " << what;
  };
  auto expect_error = [&](const std::string& needle, const std::string& op, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no error for '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(op + ": ", 0), 0u) << e.what();
    }
    check_untouched(needle);
  };
  Context ctx(dev);
  expect_error("values.size() (3) is less than the number of runs (4)", "run_length_encode", [&] {
    run_length_encode<int32_t>(keys.view(), small_values.view(), lengths.view(), ctx);
  });
  expect_error("lengths.size() (2) is less than the number of runs (4)", "run_length_encode", [&] {
    run_length_encode<int32_t>(keys.view(), values.view(), small_lengths.view(), ctx);
  });
  expect_error("values.size() (3) is less than the number of runs (4)", "unique",
               [&] { unique<int32_t>(keys.view(), small_values.view(), ctx); });
  const std::vector<VectorView<const int32_t>> chunks = {keys.view(), VectorView<const int32_t>(nullptr, 2, dev),
                                                         a.view()};
  expect_error("chunks[1] is null but has 2 elements", "run_length_encode", [&] {
    run_length_encode<int32_t>(std::span<const VectorView<const int32_t>>(chunks), values.view(), lengths.view(), ctx);
  });
  // Capacity counts runs across chunks: 4 + (5) + (6) = 6 runs.
  const std::vector<VectorView<const int32_t>> three = {keys.view(), a.view(), b.view()};
  expect_error("values.size() (4) is less than the number of runs (6)", "run_length_encode", [&] {
    run_length_encode<int32_t>(std::span<const VectorView<const int32_t>>(three), values.view(), lengths.view(), ctx);
  });
  auto in_place = to_device(std::vector<int32_t>{1, 1, 2}, dev);
  try {
    unique<int32_t>(in_place.view(), in_place.view(), ctx);
    ADD_FAILURE() << "in-place unique was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("values and keys overlap"), std::string::npos) << e.what();
  }
  EXPECT_EQ(in_place.to_host_vector(), (std::vector<int32_t>{1, 1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Devices, RunLengthEncodeTest, testing::ValuesIn(all_devices()), device_name);

TEST(RunLengthEncodeDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<int64_t> keys = {1, 1, 2};
  std::vector<int64_t> values(2, -1), lengths(2, -1);
  Context cuda_ctx(Device::cuda(0));
  try {
    run_length_encode<int64_t>(VectorView<const int64_t>(keys.data(), 3), VectorView<int64_t>(values.data(), 2),
                               VectorView<int64_t>(lengths.data(), 2), cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("keys is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(values, (std::vector<int64_t>{-1, -1}));
}

}  // namespace
}  // namespace edgewise::test
