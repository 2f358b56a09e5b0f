// SegmentTree against the sequential oracle: the sum invariant after random batches
// (duplicates, shared ancestors, every propagation path), last write wins, draws
// equal to the oracle's and pinned by a known-answer sequence, chi-square bands,
// stratified coverage, zero-priority leaves under adversarial rounding, bad input
// leaving the tree untouched, CPU == GPU.
#include <gtest/gtest.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/segment_tree.hpp"
#include "segment_tree_ref.hpp"
#include "test_support.hpp"
// The EW_HD core itself, for targets no random draw reliably reaches (u at and
// beyond the total). It is private to kernels/, hence the relative path.
#include "edgewise/kernels/common/sum_tree_descent.hpp"

namespace edgewise::test {
namespace {

using SegmentTreeTest = DeviceTest;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

void apply(SegmentTree& tree, const std::vector<int64_t>& indices, const std::vector<float>& priorities,
           Context& ctx) {
  auto d_indices = to_device(indices, tree.device());
  auto d_priorities = to_device(priorities, tree.device());
  tree.update(d_indices.view(), d_priorities.view(), ctx);
}

void apply(SegmentTree& tree, const std::vector<int64_t>& indices, const std::vector<float>& priorities) {
  Context ctx(tree.device());
  apply(tree, indices, priorities, ctx);
}

std::vector<float> nodes_of(const SegmentTree& tree) {
  std::vector<float> host(static_cast<size_t>(tree.nodes().size));
  copy_bytes(host.data(), Device::cpu(), tree.nodes().data, tree.device(), host.size() * sizeof(float));
  return host;
}

std::vector<int64_t> draws(const SegmentTree& tree, int64_t n, uint64_t seed, bool stratified) {
  auto out = poisoned<int64_t>(n, tree.device());
  Context ctx(tree.device());
  tree.sample(out.view(), seed, stratified, ctx);
  return out.to_host_vector();
}

// Random priorities in [0, 10) with about `zero_fraction` exact zeros.
std::vector<float> random_priorities(std::mt19937_64& rng, int64_t n, double zero_fraction) {
  std::uniform_real_distribution<float> value(0.0f, 10.0f);
  std::bernoulli_distribution zero(zero_fraction);
  std::vector<float> p(static_cast<size_t>(n));
  for (auto& x : p) x = zero(rng) ? 0.0f : value(rng);
  return p;
}

std::vector<int64_t> all_indices(int64_t n) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[i] = i;
  return idx;
}

// Every internal node is exactly the float sum of its children; padding and node 0 are 0.
::testing::AssertionResult sum_invariant_holds(const std::vector<float>& tree, int64_t capacity) {
  const int64_t leaves = static_cast<int64_t>(tree.size()) / 2;
  if (tree[0] != 0.0f) return ::testing::AssertionFailure() << "node 0 is " << tree[0];
  for (int64_t p = 1; p < leaves; ++p) {
    const float sum = tree[2 * p] + tree[2 * p + 1];
    if (std::memcmp(&tree[p], &sum, sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "node " << p << " is " << tree[p] << ", children sum to " << sum;
  }
  for (int64_t i = capacity; i < leaves; ++i) {
    if (tree[leaves + i] != 0.0f) return ::testing::AssertionFailure() << "padding leaf " << i << " is " << tree[leaves + i];
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "size " << a.size() << " != " << b.size();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "node " << i << ": " << a[i] << " vs " << b[i];
  }
  return ::testing::AssertionSuccess();
}

TEST_P(SegmentTreeTest, FreshTreeIsZeroWithPowerOfTwoLeaves) {
  for (int64_t capacity : {1, 2, 7, 8, 9, 257}) {
    SegmentTree tree(capacity, device());
    EXPECT_EQ(tree.capacity(), capacity);
    EXPECT_EQ(tree.leaf_count(), static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(capacity))));
    EXPECT_EQ(tree.device(), device());
    EXPECT_EQ(tree.nodes().size, 2 * tree.leaf_count());
    EXPECT_EQ(nodes_of(tree), std::vector<float>(static_cast<size_t>(2 * tree.leaf_count()), 0.0f));
    EXPECT_EQ(tree.total(), 0.0f);
  }
}

// Random batches on boundary capacities: small batches, batches with many
// duplicates (shared leaves and ancestors), and batches big enough for the rebuild
// path. After each one the tree equals the oracle's full rebuild bit for bit.
TEST_P(SegmentTreeTest, SumInvariantHoldsAfterRandomBatches) {
  auto rng = rng_for(11);
  for (int64_t capacity : {1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257, 1000, 4099}) {
    SCOPED_TRACE(detail::concat("capacity=", capacity));
    SegmentTree tree(capacity, device());
    reference::SegmentTreeRef ref(capacity);
    for (int64_t batch : {int64_t{1}, int64_t{5}, capacity / 3 + 1, int64_t{40}, 2 * capacity, int64_t{3}}) {
      for (bool crowded : {false, true}) {
        // crowded: indices from a few leaves, so duplicates and shared ancestors abound.
        std::uniform_int_distribution<int64_t> pick(0, crowded ? std::min<int64_t>(capacity - 1, 3) : capacity - 1);
        std::vector<int64_t> idx(static_cast<size_t>(batch));
        for (auto& i : idx) i = pick(rng);
        auto pri = random_priorities(rng, batch, 0.2);
        apply(tree, idx, pri);
        ref.update(idx, pri);
        const auto got = nodes_of(tree);
        ASSERT_TRUE(sum_invariant_holds(got, capacity)) << "batch " << batch << (crowded ? " crowded" : "");
        ASSERT_TRUE(bitwise_equal(got, ref.nodes())) << "batch " << batch << (crowded ? " crowded" : "");
      }
    }
  }
}

// Large enough for the parallel CPU levels and the CUDA per-level launches
// (more updates than one block handles, fewer than a rebuild would need).
TEST_P(SegmentTreeTest, SumInvariantHoldsForLargeBatchesOnALargeTree) {
  auto rng = rng_for(12);
  const int64_t capacity = (int64_t{1} << 20) - 3;
  SegmentTree tree(capacity, device());
  reference::SegmentTreeRef ref(capacity);
  std::uniform_int_distribution<int64_t> pick(0, capacity - 1);
  for (int64_t batch : {int64_t{20000}, int64_t{1024}, int64_t{30000}}) {
    std::vector<int64_t> idx(static_cast<size_t>(batch));
    for (auto& i : idx) i = pick(rng);
    for (int64_t k = 0; k + 1 < batch; k += 97) idx[k + 1] = idx[k];  // some duplicates
    auto pri = random_priorities(rng, batch, 0.1);
    apply(tree, idx, pri);
    ref.update(idx, pri);
    const auto got = nodes_of(tree);
    ASSERT_TRUE(sum_invariant_holds(got, capacity)) << "batch " << batch;
    ASSERT_TRUE(bitwise_equal(got, ref.nodes())) << "batch " << batch;
  }
}

TEST_P(SegmentTreeTest, LastWriteWinsForDuplicateIndices) {
  SegmentTree tree(10, device());
  apply(tree, {3, 5, 3, 9, 3, 5}, {1.0f, 2.0f, 3.0f, 4.0f, 7.5f, 0.0f});
  auto out = poisoned<float>(10, device());
  Context ctx(device());
  tree.priorities(out.view(), ctx);
  EXPECT_EQ(out.to_host_vector(), (std::vector<float>{0, 0, 0, 7.5f, 0, 0, 0, 0, 0, 4.0f}));
  EXPECT_EQ(tree.total(), 11.5f);
  EXPECT_EQ(tree.total(ctx), 11.5f);
}

// One batch touching every leaf (every ancestor shared) equals one-at-a-time updates.
TEST_P(SegmentTreeTest, OneBatchEqualsOneUpdateAtATime) {
  auto rng = rng_for(13);
  for (int64_t capacity : {33, 1000}) {
    auto pri = random_priorities(rng, capacity, 0.3);
    SegmentTree batched(capacity, device()), single(capacity, device());
    apply(batched, all_indices(capacity), pri);
    Context ctx(device());
    for (int64_t i = 0; i < capacity; ++i) apply(single, {i}, {pri[i]}, ctx);
    EXPECT_TRUE(bitwise_equal(nodes_of(batched), nodes_of(single))) << "capacity " << capacity;
  }
}

TEST_P(SegmentTreeTest, NegativeZeroIsStoredAsZero) {
  SegmentTree tree(4, device());
  apply(tree, {1, 2}, {-0.0f, 1.0f});
  const auto nodes = nodes_of(tree);
  const float zero = 0.0f;
  EXPECT_EQ(std::memcmp(&nodes[4 + 1], &zero, sizeof(float)), 0);
  EXPECT_EQ(draws(tree, 100, 1, false), std::vector<int64_t>(100, 2));
}

// Pins the Philox usage and the descent: any change to either changes these
// sequences (also produced by the independent Python implementation in
// tests/python/test_segment_tree.py). Both devices must give them.
TEST_P(SegmentTreeTest, KnownAnswerDrawSequence) {
  SegmentTree tree(7, device());
  apply(tree, {0, 1, 2, 3, 4, 5, 6}, {0.5f, 0.0f, 2.0f, 1.0f, 0.0f, 3.0f, 0.25f});
  EXPECT_EQ(draws(tree, 12, 20240601, false), (std::vector<int64_t>{6, 2, 2, 0, 3, 3, 2, 2, 3, 2, 5, 2}));
  EXPECT_EQ(draws(tree, 12, 20240601, true), (std::vector<int64_t>{2, 2, 2, 2, 2, 3, 3, 5, 5, 5, 5, 5}));
}

TEST_P(SegmentTreeTest, DrawsEqualTheOraclesDraws) {
  auto rng = rng_for(14);
  for (int64_t capacity : {1, 2, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257, 4099}) {
    SegmentTree tree(capacity, device());
    reference::SegmentTreeRef ref(capacity);
    auto pri = random_priorities(rng, capacity, 0.3);
    pri[static_cast<size_t>(capacity / 2)] = 1.0f;  // never all zero
    apply(tree, all_indices(capacity), pri);
    ref.update(all_indices(capacity), pri);
    for (int64_t n : {1, 7, 33, 1000}) {
      for (bool stratified : {false, true}) {
        EXPECT_EQ(draws(tree, n, 99 + n, stratified), ref.sample(n, 99 + n, stratified))
            << "capacity " << capacity << " n " << n << (stratified ? " stratified" : "");
      }
    }
  }
}

// 200k draws over 50 leaves (some zero) at a fixed seed: Pearson's statistic over
// the nonzero leaves stays inside a band that a correct sampler leaves with
// probability < 1e-6, and zero leaves get no draws at all.
TEST_P(SegmentTreeTest, FrequenciesPassChiSquareAtFixedSeeds) {
  auto rng = rng_for(15);
  const int64_t capacity = 50, n = 200000;
  auto pri = random_priorities(rng, capacity, 0.2);
  pri[0] = 0.0f;
  pri[capacity - 1] = 0.0f;  // zeros at both edges
  pri[7] = 0.01f;            // and one rare leaf
  SegmentTree tree(capacity, device());
  apply(tree, all_indices(capacity), pri);
  reference::SegmentTreeRef ref(capacity);
  ref.update(all_indices(capacity), pri);
  const double total = ref.total_exact();
  for (bool stratified : {false, true}) {
    for (uint64_t seed : {1ull, 20261129ull}) {
      std::vector<int64_t> counts(capacity, 0);
      for (int64_t d : draws(tree, n, seed, stratified)) {
        ASSERT_TRUE(d >= 0 && d < capacity) << d;
        ++counts[d];
      }
      double chi2 = 0;
      int df = -1;
      for (int64_t i = 0; i < capacity; ++i) {
        if (pri[i] == 0.0f) {
          EXPECT_EQ(counts[i], 0) << "zero-priority leaf " << i << " was drawn";
          continue;
        }
        const double expected = static_cast<double>(n) * pri[i] / total;
        chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
        ++df;
      }
      const double band = df + 7.0 * std::sqrt(2.0 * df);
      EXPECT_LT(chi2, band) << "seed " << seed << (stratified ? " stratified" : "") << " df " << df;
      if (stratified) {
        EXPECT_LT(chi2, 1.0) << "stratified draws track the expectation closely";
      }
    }
  }
}

// Stratified: draw i falls in the i-th equal-mass slice, so draws are nondecreasing
// and a leaf of mass m, spanning n m / total slices, gets fewer than two draws more
// or less than that (it can touch one partial slice at each end).
TEST_P(SegmentTreeTest, StratifiedDrawsCoverEveryStratum) {
  auto rng = rng_for(16);
  for (int64_t capacity : {9, 100, 1000}) {
    auto pri = random_priorities(rng, capacity, 0.25);
    pri[0] = 3.0f;
    SegmentTree tree(capacity, device());
    apply(tree, all_indices(capacity), pri);
    reference::SegmentTreeRef ref(capacity);
    ref.update(all_indices(capacity), pri);
    for (int64_t n : {1, 64, 5000}) {
      const auto d = draws(tree, n, 5, true);
      std::vector<int64_t> counts(capacity, 0);
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0) {
          ASSERT_LE(d[i - 1], d[i]) << "capacity " << capacity << " n " << n << " draw " << i;
        }
        ++counts[d[i]];
      }
      for (int64_t i = 0; i < capacity; ++i) {
        const double expected = static_cast<double>(n) * pri[i] / ref.total_exact();
        EXPECT_LE(std::fabs(static_cast<double>(counts[i]) - expected), 2.0)
            << "leaf " << i << " capacity " << capacity << " n " << n;
      }
    }
  }
}

// Trees built to break a careless descent: all mass on one edge leaf, tiny
// priorities next to huge ones, subnormals, sums that round. No zero leaf is ever
// drawn and every draw is in range.
TEST_P(SegmentTreeTest, ZeroPriorityLeavesAreNeverDrawnOnAdversarialTrees) {
  struct Case {
    std::string name;
    int64_t capacity;
    std::vector<std::pair<int64_t, float>> nonzero;
  };
  const float tiny = std::numeric_limits<float>::denorm_min();
  std::vector<Case> cases = {
      {"only the first leaf", 1000, {{0, 1.0f}}},
      {"only the last leaf", 1000, {{999, 1.0f}}},
      {"only the last leaf, subnormal", 1025, {{1024, tiny}}},
      {"only the first leaf, huge", 1025, {{0, 3e38f}}},
      {"huge dynamic range", 513, {{0, 1e-38f}, {100, 3e38f}, {511, tiny}, {512, 1.0f}}},
      {"capacity one", 1, {{0, 2.0f}}},
  };
  // Sums that round: 1 + many values below half an ulp of it, then zeros on the right.
  Case rounding{"rounding sums", 4096, {}};
  rounding.nonzero.push_back({0, 1.0f});
  for (int64_t i = 1; i < 2048; i += 2) rounding.nonzero.push_back({i, 3e-8f});
  cases.push_back(rounding);
  Case alternating{"alternating tiny and zero", 777, {}};
  for (int64_t i = 0; i < 777; i += 2) alternating.nonzero.push_back({i, i % 4 == 0 ? 1e-30f : 7e29f});
  cases.push_back(alternating);

  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    SegmentTree tree(c.capacity, device());
    std::vector<int64_t> idx;
    std::vector<float> pri;
    for (auto [i, p] : c.nonzero) {
      idx.push_back(i);
      pri.push_back(p);
    }
    apply(tree, idx, pri);
    std::set<int64_t> allowed(idx.begin(), idx.end());
    reference::SegmentTreeRef ref(c.capacity);
    ref.update(idx, pri);
    for (bool stratified : {false, true}) {
      const auto d = draws(tree, 20000, 3, stratified);
      for (int64_t x : d) ASSERT_TRUE(allowed.count(x)) << "drew leaf " << x << (stratified ? " stratified" : "");
      EXPECT_EQ(d, ref.sample(20000, 3, stratified));
    }
  }
}

// The descent itself (the EW_HD core both backends run) at targets random draws
// almost never produce: u at the total, beyond it, and in the sliver where a
// rounded-up parent exceeds its children's exact mass.
TEST(SegmentTreeCore, DescentNeverEntersAZeroChild) {
  using segment_tree_detail::descend;
  // Leaves [x1, x2, y, 0, z, 0, 0, 0]: node 4 = fl(x1 + x2), node 2 = fl(node 4 + y)
  // with rounding up, so a u just below node 2 lands past y's mass.
  reference::SegmentTreeRef ref(8);
  const float x1 = 1.0f, x2 = 0x1.8p-24f, y = 0x1.0p-24f, z = 0.5f;
  ref.update({0, 1, 2, 4}, {x1, x2, y, z});
  const auto tree = ref.nodes();
  ASSERT_GT(static_cast<double>(tree[2]), static_cast<double>(x1) + x2 + y) << "the test needs a rounded-up node";
  const double total = tree[1];
  const double targets[] = {0.0,
                            std::nextafter(static_cast<double>(tree[2]), 0.0),
                            static_cast<double>(tree[2]),
                            static_cast<double>(x1) + x2 + y,
                            total,
                            std::nextafter(total, 10.0),
                            2 * total,
                            1e300};
  for (double u : targets) {
    const int64_t leaf = descend(tree.data(), 8, u);
    EXPECT_TRUE(leaf == 0 || leaf == 1 || leaf == 2 || leaf == 4) << "u " << u << " reached leaf " << leaf;
    EXPECT_GT(tree[8 + leaf], 0.0f) << "u " << u;
  }
  EXPECT_EQ(descend(tree.data(), 8, std::nextafter(static_cast<double>(tree[2]), 0.0)), 2)
      << "past y's exact mass inside node 2: the zero right sibling is skipped";
  EXPECT_EQ(descend(tree.data(), 8, total), 4) << "at the total: the last nonzero leaf";
  EXPECT_EQ(descend(tree.data(), 8, 0.0), 0);
  // Half-open intervals: a target exactly at a boundary belongs to the right leaf.
  reference::SegmentTreeRef even(4);
  even.update({0, 1, 2, 3}, {1.0f, 1.0f, 1.0f, 1.0f});
  const auto quarters = even.nodes();
  EXPECT_EQ(descend(quarters.data(), 4, 0.0), 0);
  EXPECT_EQ(descend(quarters.data(), 4, 1.0), 1);
  EXPECT_EQ(descend(quarters.data(), 4, 2.0), 2);
  EXPECT_EQ(descend(quarters.data(), 4, std::nextafter(3.0, 0.0)), 2);
  EXPECT_EQ(descend(quarters.data(), 4, 3.0), 3);
  // All mass on leaf 5 of 8: every target reaches it.
  reference::SegmentTreeRef one(8);
  one.update({5}, {0x1.0p-149f});
  const auto single = one.nodes();
  for (double u : {0.0, 1e-50, 1.0, 1e300}) EXPECT_EQ(descend(single.data(), 8, u), 5) << "u " << u;
}

TEST_P(SegmentTreeTest, DrawsAreIndependentOfThreadCount) {
  auto rng = rng_for(17);
  const int64_t capacity = 5000;
  auto pri = random_priorities(rng, capacity, 0.3);
  SegmentTree tree(capacity, device());
  apply(tree, all_indices(capacity), pri);
  const int saved = omp_get_max_threads();
  std::vector<std::vector<int64_t>> results;
  for (int threads : {1, 2, 1}) {
    omp_set_num_threads(threads);
    results.push_back(draws(tree, 10000, 8, false));  // enough draws for the parallel path
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[0], results[2]);
}

// The same updates on this device and on the CPU give bitwise equal trees and equal
// draws (on the CPU instance this compares two CPU trees).
TEST_P(SegmentTreeTest, DrawsAndTreeEqualTheCpus) {
  auto rng = rng_for(18);
  for (int64_t capacity : {65, 100000}) {
    SegmentTree here(capacity, device()), cpu(capacity, Device::cpu());
    std::uniform_int_distribution<int64_t> pick(0, capacity - 1);
    for (int round = 0; round < 3; ++round) {
      std::vector<int64_t> idx(1024);
      for (auto& i : idx) i = pick(rng);
      auto pri = random_priorities(rng, 1024, 0.2);
      apply(here, idx, pri);
      apply(cpu, idx, pri);
    }
    EXPECT_TRUE(bitwise_equal(nodes_of(here), nodes_of(cpu))) << "capacity " << capacity;
    EXPECT_EQ(here.total(), cpu.total());
    for (bool stratified : {false, true}) {
      EXPECT_EQ(draws(here, 5000, 31337, stratified), draws(cpu, 5000, 31337, stratified))
          << "capacity " << capacity << (stratified ? " stratified" : "");
    }
  }
}

// Bad input: a clear error naming the argument and the first bad position, and the
// tree exactly as it was.
TEST_P(SegmentTreeTest, BadUpdatesThrowAndLeaveTheTreeUnchanged) {
  SegmentTree tree(10, device());
  apply(tree, {0, 4, 9}, {1.0f, 2.0f, 3.0f});
  const auto before = nodes_of(tree);
  struct Case {
    std::vector<int64_t> indices;
    std::vector<float> priorities;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{1, 10}, {1.0f, 1.0f}, "indices[1] (10) must lie in [0, 10)"},
      {{-1, 2}, {1.0f, 1.0f}, "indices[0] (-1) must lie in [0, 10)"},
      {{1, 2, 3}, {1.0f, -1.0f, 1.0f}, "priorities[1] (-1) must be finite and >= 0"},
      {{1, 2, 3}, {1.0f, 1.0f, kNaN}, "priorities[2] (nan) must be finite and >= 0"},
      {{1, 2}, {kInf, 1.0f}, "priorities[0] (inf) must be finite and >= 0"},
      {{1, 2}, {1.0f, -kInf}, "priorities[1] (-inf) must be finite and >= 0"},
      {{1, 2, 3, 4}, {1.0f, 1.0f, -2.0f, 1.0f}, "priorities[2] (-2)"},
      {{1, 2, 3, 40}, {1.0f, 1.0f, -2.0f, 1.0f}, "priorities[2] (-2)"},  // the first bad position
      {{1, 2, 3}, {1.0f, 1.0f}, "indices.size() (3) must equal priorities.size() (2)"},
  };
  for (const Case& c : cases) {
    try {
      apply(tree, c.indices, c.priorities);
      ADD_FAILURE() << "no error for '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("SegmentTree::update"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(bitwise_equal(nodes_of(tree), before)) << "tree changed by '" << c.needle << "'";
  }
  EXPECT_THROW(SegmentTree(0, device()), std::invalid_argument);
  EXPECT_THROW(SegmentTree(-5, device()), std::invalid_argument);
}

TEST_P(SegmentTreeTest, SamplingNeedsAPositiveFiniteTotal) {
  SegmentTree tree(5, device());
  auto out = poisoned<int64_t>(4, device());
  Context ctx(device());
  try {
    tree.sample(out.view(), 1, false, ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SegmentTree::sample: total() (0) must be finite and > 0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(out.to_host_vector(), std::vector<int64_t>(4, -1)) << "out untouched";
  tree.sample(VectorView<int64_t>(nullptr, 0, device()), 1, false, ctx);  // zero draws: nothing to do
  // Finite priorities whose sum overflows: the tree holds inf, sampling refuses.
  apply(tree, {0, 1}, {3e38f, 3e38f});
  EXPECT_EQ(tree.total(), kInf);
  EXPECT_THROW(tree.sample(out.view(), 1, false, ctx), std::invalid_argument);
  // Unvalidated, an unsampleable total writes -1.
  auto out2 = poisoned<int64_t>(4, device());
  out2.fill_bytes(0);
  ctx.validate = false;
  tree.sample(out2.view(), 1, true, ctx);
  EXPECT_EQ(out2.to_host_vector(), std::vector<int64_t>(4, -1));
  // The sizes of priorities() are checked too.
  auto wrong = poisoned<float>(4, device());
  EXPECT_THROW(tree.priorities(wrong.view(), ctx), std::invalid_argument);
}

TEST_P(SegmentTreeTest, EmptyBatchChangesNothing) {
  SegmentTree tree(9, device());
  apply(tree, {2}, {1.0f});
  const auto before = nodes_of(tree);
  apply(tree, {}, {});
  EXPECT_TRUE(bitwise_equal(nodes_of(tree), before));
}

INSTANTIATE_TEST_SUITE_P(Devices, SegmentTreeTest, testing::ValuesIn(all_devices()), device_name);

TEST(SegmentTreeDevices, MixedDevicesAreAnErrorNotACopy) {
  SegmentTree tree(4);
  std::vector<int64_t> idx = {1};
  std::vector<float> pri = {1.0f};
  Context cuda_ctx(Device::cuda(0));
  try {
    tree.update(VectorView<const int64_t>(idx.data(), 1), VectorView<const float>(pri.data(), 1), cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("SegmentTree::update: the context is on cuda:0 but the tree is on cpu"),
              std::string::npos)
        << e.what();
  }
  Context cpu_ctx;
  try {
    tree.update(VectorView<const int64_t>(idx.data(), 1, Device::cuda(0)), VectorView<const float>(pri.data(), 1),
                cpu_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("indices is on cuda:0 but the context is on cpu"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(tree.total(), 0.0f);
  std::vector<int64_t> out(2, -7);
  EXPECT_THROW(tree.sample(VectorView<int64_t>(out.data(), 2, Device::cuda(0)), 1, false, cpu_ctx),
               std::invalid_argument);
  if (!cuda_built()) {
    EXPECT_THROW(SegmentTree(4, Device::cuda(0)), std::invalid_argument);
  }
}

TEST(SegmentTreeDevices, DefaultContextOverloadsAndUnvalidatedUpdatesAgree) {
  SegmentTree a(6), b(6);
  std::vector<int64_t> idx = {5, 0, 5};
  std::vector<float> pri = {1.0f, 2.0f, 4.0f};
  a.update(VectorView<const int64_t>(idx.data(), 3), VectorView<const float>(pri.data(), 3));
  Context trusted;
  trusted.validate = false;
  b.update(VectorView<const int64_t>(idx.data(), 3), VectorView<const float>(pri.data(), 3), trusted);
  EXPECT_TRUE(bitwise_equal(nodes_of(a), nodes_of(b)));
  EXPECT_EQ(a.total(), 6.0f);
  std::vector<int64_t> da(50), db(50);
  a.sample(VectorView<int64_t>(da.data(), 50), 4);
  b.sample(VectorView<int64_t>(db.data(), 50), 4, false, trusted);
  EXPECT_EQ(da, db);
  std::vector<float> pa(6);
  a.priorities(VectorView<float>(pa.data(), 6));
  EXPECT_EQ(pa, (std::vector<float>{2, 0, 0, 0, 0, 4}));
}

}  // namespace
}  // namespace edgewise::test
