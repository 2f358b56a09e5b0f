// galloping_search against std::lower_bound (the sequential oracle): random,
// duplicate-heavy, clustered and adversarial inputs, with and without value_order,
// boundary sizes, gallop distances, float extremes, every validation bit, bad input.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/galloping_search.hpp"
#include "galloping_search_ref.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using GallopingSearchTest = DeviceTest;
using Errors = GallopingSearchErrors;
constexpr uint32_t kPoisonWord = 0xFFFFFFFFu;

template <class T>
struct Problem {
  std::vector<T> values;
  std::optional<std::vector<int64_t>> order;
  std::vector<T> queries;
  std::vector<int64_t> segments;  // S x 4, flat
  GallopingSearchOptions options;
  uint32_t word_before = 0xA0u;  // the validation word's content before the call
};

struct Outcome {
  std::vector<int64_t> positions;
  uint32_t word = 0;
};

// Runs galloping_search on `device` with positions poisoned (-1).
template <class T>
Outcome run_search(Device device, const Problem<T>& p) {
  auto d_values = to_device(p.values, device);
  auto d_order = to_device(p.order ? *p.order : std::vector<int64_t>{}, device);
  auto d_queries = to_device(p.queries, device);
  auto d_segments = to_device(p.segments, device);
  auto d_positions = poisoned<int64_t>(static_cast<int64_t>(p.queries.size()), device);
  auto d_word = to_device(std::vector<uint32_t>{p.word_before}, device);
  VectorView<const int64_t> order;
  if (p.order) order = VectorView<const int64_t>(d_order.data(), d_order.size(), device);
  const int64_t S = static_cast<int64_t>(p.segments.size()) / 4;
  Context ctx(device);
  galloping_search<T>(d_values.view(), order, d_queries.view(),
                      MatrixView<const int64_t>(d_segments.data(), S, 4, device), d_positions.view(), d_word.view(),
                      p.options, ctx);
  return {d_positions.to_host_vector(), d_word.to_host_vector()[0]};
}

template <class T>
reference::GallopingResult reference_of(const Problem<T>& p) {
  auto r = reference::galloping_search_ref(p.values, p.order, p.queries, p.segments, p.options.queries_per_tile,
                                           p.options.max_query_count,
                                           std::vector<int64_t>(p.queries.size(), int64_t{-1}));
  if (p.options.preserve_validation) r.validation |= p.word_before;
  return r;
}

template <class T>
void expect_matches_reference(Device device, const Problem<T>& p, const std::string& label) {
  SCOPED_TRACE(label);
  const auto want = reference_of(p);
  const auto got = run_search(device, p);
  EXPECT_TRUE(equal_exactly(got.positions, want.positions));
  EXPECT_EQ(got.word, want.validation);
}

// ---- input generators -------------------------------------------------------

enum class ValueKind { Random, Duplicates, Clustered };
enum class QueryKind { Ordered, Duplicates, Clustered, Hits, Decreasing, Shuffled, Sawtooth };

const char* name_of(ValueKind k) {
  switch (k) {
    case ValueKind::Random: return "random";
    case ValueKind::Duplicates: return "duplicates";
    case ValueKind::Clustered: return "clustered";
  }
  return "?";
}
const char* name_of(QueryKind k) {
  switch (k) {
    case QueryKind::Ordered: return "ordered";
    case QueryKind::Duplicates: return "duplicates";
    case QueryKind::Clustered: return "clustered";
    case QueryKind::Hits: return "hits";
    case QueryKind::Decreasing: return "decreasing";
    case QueryKind::Shuffled: return "shuffled";
    case QueryKind::Sawtooth: return "sawtooth";
  }
  return "?";
}

// A value in [0, 1000) of type T (floats keep fractions, so ties are rarer).
template <class T>
T draw(std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  return static_cast<T>(d(rng));
}

// n unsorted values of the kind (callers sort or index them).
template <class T>
std::vector<T> raw_values(std::mt19937_64& rng, int64_t n, ValueKind kind) {
  std::vector<T> v(static_cast<size_t>(n));
  std::uniform_int_distribution<int> few(0, 9);
  std::vector<double> centres = {50, 300, 301, 700, 990};
  std::uniform_int_distribution<size_t> pick(0, centres.size() - 1);
  for (auto& x : v) {
    switch (kind) {
      case ValueKind::Random: x = draw<T>(rng, 0, 1000); break;
      case ValueKind::Duplicates: x = static_cast<T>(few(rng) * 100); break;
      case ValueKind::Clustered: x = draw<T>(rng, 0, 3) + static_cast<T>(centres[pick(rng)]); break;
    }
  }
  return v;
}

// Queries for one segment whose sorted values are `seq`.
template <class T>
std::vector<T> segment_queries(std::mt19937_64& rng, int64_t n, QueryKind kind, const std::vector<T>& seq) {
  std::vector<T> q(static_cast<size_t>(n));
  std::uniform_int_distribution<int> few(0, 11);
  for (auto& x : q) {
    switch (kind) {
      case QueryKind::Duplicates: x = static_cast<T>(few(rng) * 100); break;  // 0..1100: some above every value
      case QueryKind::Clustered: x = draw<T>(rng, 0, 4) + static_cast<T>(few(rng) < 6 ? 300 : 990); break;
      case QueryKind::Hits:
        x = seq.empty() ? T(5) : seq[std::uniform_int_distribution<size_t>(0, seq.size() - 1)(rng)];
        break;
      default: x = draw<T>(rng, 0, 1050); break;
    }
  }
  switch (kind) {
    case QueryKind::Decreasing: std::sort(q.rbegin(), q.rend()); break;
    case QueryKind::Shuffled: break;
    case QueryKind::Sawtooth:  // sorted runs of 5: decreases at every 5th query, in and across tiles
      for (size_t i = 0; i < q.size(); i += 5) std::sort(q.begin() + i, q.begin() + std::min(q.size(), i + 5));
      break;
    default: std::sort(q.begin(), q.end()); break;
  }
  return q;
}

// S segments whose query ranges partition (with a few gaps) Q queries and whose
// value ranges are sorted runs in a value view of the given length. With
// `blocks`, every segment has its own sorted block of the view (the view is not
// globally sorted); otherwise the view is sorted and ranges overlap freely.
template <class T>
Problem<T> random_problem(std::mt19937_64& rng, ValueKind vk, QueryKind qk, bool with_order, bool blocks,
                          int64_t S, int64_t mean_values, int64_t mean_queries) {
  Problem<T> p;
  std::uniform_int_distribution<int64_t> vlen(0, 2 * mean_values), qlen(0, 2 * mean_queries), gap(0, 3);
  std::vector<int64_t> value_lengths(static_cast<size_t>(S));
  for (auto& l : value_lengths) l = vlen(rng);
  const int64_t V = blocks ? std::accumulate(value_lengths.begin(), value_lengths.end(), int64_t{0})
                           : std::max<int64_t>(2 * mean_values, 1);
  std::vector<T> view = raw_values<T>(rng, V, vk);  // the value view, in view order
  int64_t view_at = 0;
  std::vector<std::vector<T>> seqs;
  for (int64_t s = 0; s < S; ++s) {
    int64_t vo, vc = value_lengths[s];
    if (blocks) {
      vo = view_at;
      view_at += vc;
      std::sort(view.begin() + vo, view.begin() + vo + vc);
    } else {
      vc = std::min(vc, V);
      vo = std::uniform_int_distribution<int64_t>(0, V - vc)(rng);
    }
    p.segments.insert(p.segments.end(), {vo, vc, 0, 0});
  }
  if (!blocks) std::sort(view.begin(), view.end());
  for (int64_t s = 0; s < S; ++s) {
    const int64_t vo = p.segments[4 * s], vc = p.segments[4 * s + 1];
    seqs.emplace_back(view.begin() + vo, view.begin() + vo + vc);
  }
  for (int64_t s = 0; s < S; ++s) {
    const int64_t skip = gap(rng) == 0 ? 2 : 0;  // queries no segment covers stay untouched
    for (int64_t k = 0; k < skip; ++k) p.queries.push_back(T(1));
    const auto q = segment_queries<T>(rng, qlen(rng), qk, seqs[s]);
    p.segments[4 * s + 2] = static_cast<int64_t>(p.queries.size());
    p.segments[4 * s + 3] = static_cast<int64_t>(q.size());
    p.queries.insert(p.queries.end(), q.begin(), q.end());
  }
  if (!with_order) {
    p.values = view;
    return p;
  }
  // Store the view's elements scattered among decoys: view position i is row
  // order[i]; the rows live in a shuffled, larger values array.
  const int64_t N = V + V / 2 + 1;
  std::vector<int64_t> rows(static_cast<size_t>(N));
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), rng);
  p.values = raw_values<T>(rng, N, ValueKind::Random);  // decoys, overwritten where the view points
  p.order = std::vector<int64_t>(static_cast<size_t>(V));
  for (int64_t i = 0; i < V; ++i) {
    (*p.order)[i] = rows[i];
    p.values[rows[i]] = view[i];
  }
  return p;
}

// ---- tests ------------------------------------------------------------------

template <class T>
void sweep_random(Device device, uint64_t salt) {
  auto rng = rng_for(salt);
  const ValueKind value_kinds[] = {ValueKind::Random, ValueKind::Duplicates, ValueKind::Clustered};
  const QueryKind query_kinds[] = {QueryKind::Ordered,    QueryKind::Duplicates, QueryKind::Clustered,
                                   QueryKind::Hits,       QueryKind::Decreasing, QueryKind::Shuffled,
                                   QueryKind::Sawtooth};
  for (bool with_order : {false, true}) {
    for (bool blocks : {false, true}) {
      for (ValueKind vk : value_kinds) {
        for (QueryKind qk : query_kinds) {
          auto p = random_problem<T>(rng, vk, qk, with_order, blocks, 13, 60, 40);
          for (int64_t tile : {1, 7, 32, 100}) {
            p.options.queries_per_tile = tile;
            expect_matches_reference(device, p,
                                     detail::concat("order=", with_order, " blocks=", blocks, " values=", name_of(vk),
                                                    " queries=", name_of(qk), " tile=", tile));
          }
        }
      }
    }
  }
}

TEST_P(GallopingSearchTest, FloatEqualsLowerBoundOnRandomDuplicateClusteredAndAdversarialInputs) {
  sweep_random<float>(device(), 1);
}
TEST_P(GallopingSearchTest, UInt32EqualsLowerBoundOnRandomDuplicateClusteredAndAdversarialInputs) {
  sweep_random<uint32_t>(device(), 2);
}

TEST_P(GallopingSearchTest, OrderedQueriesRaiseNoBitAndDecreasingOnesRaiseOnlyBit4) {
  auto rng = rng_for(3);
  auto ordered = random_problem<float>(rng, ValueKind::Random, QueryKind::Ordered, true, true, 20, 50, 50);
  EXPECT_EQ(reference_of(ordered).validation, 0u) << "the oracle agrees the input is clean";
  EXPECT_EQ(run_search(device(), ordered).word, 0u);
  auto decreasing = random_problem<float>(rng, ValueKind::Random, QueryKind::Decreasing, true, true, 20, 50, 50);
  EXPECT_EQ(run_search(device(), decreasing).word, Errors::kDecreasingQueries);
}

TEST_P(GallopingSearchTest, BoundarySizes) {
  auto rng = rng_for(4);
  const int64_t sizes[] = {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 257};
  for (int64_t N : sizes) {
    for (int64_t Q : sizes) {
      Problem<uint32_t> p;
      p.values = raw_values<uint32_t>(rng, N, ValueKind::Random);
      std::sort(p.values.begin(), p.values.end());
      p.queries = segment_queries<uint32_t>(rng, Q, QueryKind::Ordered, p.values);
      p.segments = {0, N, 0, Q};
      for (int64_t tile : {1, 32, 33}) {
        p.options.queries_per_tile = tile;
        expect_matches_reference(device(), p, detail::concat("N=", N, " Q=", Q, " tile=", tile));
      }
    }
  }
}

// Queries stepping through 0, 1, 2, ... by a fixed stride land the gallop at every
// probe length and the bounded search on both sides of the linear-scan threshold.
TEST_P(GallopingSearchTest, GallopDistancesAroundTheLinearScanThreshold) {
  const int64_t N = 6000;
  std::vector<uint32_t> values(N);
  for (int64_t i = 0; i < N; ++i) values[i] = static_cast<uint32_t>(2 * i);  // even numbers: odd queries miss
  for (int64_t stride : {1, 2, 3, 15, 16, 17, 18, 31, 32, 33, 34, 35, 63, 64, 65, 1000, 5000}) {
    Problem<uint32_t> p;
    p.values = values;
    for (int64_t q = 0; q < 2 * N + 3 * stride; q += stride) p.queries.push_back(static_cast<uint32_t>(q));
    p.segments = {0, N, 0, static_cast<int64_t>(p.queries.size())};
    p.options.queries_per_tile = 64;
    expect_matches_reference(device(), p, detail::concat("stride=", stride));
  }
}

TEST_P(GallopingSearchTest, IntegerExtremes) {
  const uint32_t hi = std::numeric_limits<uint32_t>::max();
  Problem<uint32_t> p;
  p.values = {0, 0, 1, hi - 1, hi, hi};
  p.queries = {0, 0, 1, 2, hi - 1, hi, hi, 0, hi};
  p.segments = {0, 6, 0, 7, 2, 3, 7, 2};
  expect_matches_reference(device(), p, "uint32 extremes");
  const auto got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{0, 0, 2, 3, 3, 4, 4, 2, 4}));
  EXPECT_EQ(got.word, 0u);
}

TEST_P(GallopingSearchTest, FloatExtremesSignedZerosAndInfiniteValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float big = std::numeric_limits<float>::max();
  const float tiny = std::numeric_limits<float>::denorm_min();
  Problem<float> p;
  p.values = {-inf, -big, -0.0f, 0.0f, tiny, big, inf, inf};
  p.queries = {-big, -0.0f, 0.0f, tiny, 1.0f, big};
  p.segments = {0, 8, 0, 6};
  expect_matches_reference(device(), p, "float extremes");
  const auto got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{1, 2, 2, 4, 5, 5})) << "-0.0 == +0.0: both find the first zero";
  EXPECT_EQ(got.word, 0u);
}

TEST_P(GallopingSearchTest, NonFiniteQueriesRaiseBit8InfinitiesStillExactNaNSortsLast) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Problem<float> p;
  p.values = {1, 2, 3, 10, 20, 30, inf};
  // Segment 0 [1, 2, 3, 10]: NaN inside an ordered run neither breaks the gallop
  // nor counts as a decrease. Segment 1 [20, 30, inf]: +-inf get exact positions.
  p.queries = {1.5f, nan, 2.5f, nan, 10, -inf, 25, inf, nan};
  p.segments = {0, 4, 0, 5, 4, 3, 5, 4};
  expect_matches_reference(device(), p, "non-finite");
  auto got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{1, 4, 2, 4, 3, 4, 5, 6, 7}));
  EXPECT_EQ(got.word, Errors::kNonFiniteQuery) << "no decrease: NaN takes no part in the order check";
  // A decrease across a NaN is still a decrease.
  p.queries = {3, nan, 1.5f, 1, 2, 2, 2, 2, 2};
  got = run_search(device(), p);
  EXPECT_EQ(got.positions[2], 1);
  EXPECT_EQ(got.word, Errors::kNonFiniteQuery | Errors::kDecreasingQueries);
  // Finite queries only: bit 8 stays clear.
  p.queries = {1, 2, 3, 4, 5, 20, 21, 22, 23};
  EXPECT_EQ(run_search(device(), p).word, 0u);
}

TEST_P(GallopingSearchTest, DecreasingQueriesAreReportedInsideATileOnlyAndStayExact) {
  Problem<uint32_t> p;
  p.values = {10, 20, 30, 40, 50};
  p.queries = {25, 45, 5, 35};  // tiles of 2: [25, 45] [5, 35] — the drop is between tiles
  p.segments = {0, 5, 0, 4};
  p.options.queries_per_tile = 2;
  auto got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{2, 4, 0, 3}));
  EXPECT_EQ(got.word, 0u) << "a decrease across a tile boundary is not reported";
  p.options.queries_per_tile = 3;  // [25, 45, 5] [35]: now inside a tile
  got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{2, 4, 0, 3})) << "the fallback search is exact";
  EXPECT_EQ(got.word, Errors::kDecreasingQueries);
  expect_matches_reference(device(), p, "tile=3");
}

TEST_P(GallopingSearchTest, EveryMalformedSegmentRaisesItsBitAndWritesNothing) {
  const int64_t big = std::numeric_limits<int64_t>::max();
  Problem<float> p;
  p.values = {1, 2, 3, 4, 5, 6};
  p.queries = {0, 2.5f, 9, 3, 3, 4, 1, 6};
  struct Case {
    std::vector<int64_t> bad;  // the record under test, at segment 1
    int64_t max_query_count;
    uint32_t bits;
  };
  const std::vector<Case> cases = {
      {{4, 3, 3, 2}, -1, Errors::kValueRange},           // value range past V = 6
      {{-1, 2, 3, 2}, -1, Errors::kValueRange},          // negative valueOffset
      {{2, -1, 3, 2}, -1, Errors::kValueRange},          // negative valueCount
      {{big, big, 3, 2}, -1, Errors::kValueRange},       // offset + count overflows
      {{7, 0, 3, 2}, -1, Errors::kValueRange},           // empty, but starting past the end
      {{0, 6, 7, 2}, -1, Errors::kQueryRange},           // query range past Q = 8
      {{0, 6, -2, 2}, -1, Errors::kQueryRange},          // negative queryOffset
      {{0, 6, 3, -1}, -1, Errors::kQueryRange},          // negative queryCount
      {{0, 6, big, big}, -1, Errors::kQueryRange},       // overflow
      {{0, 6, 3, 3}, 2, Errors::kQueryRange},            // queryCount above max_query_count
      {{9, 1, 9, 1}, -1, Errors::kValueRange | Errors::kQueryRange},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(detail::concat("segment [", c.bad[0], ", ", c.bad[1], ", ", c.bad[2], ", ", c.bad[3],
                                "] max_query_count=", c.max_query_count));
    // Segment 0 (queries 0..1) and segment 2 (queries 6..7) are well formed; no
    // segment covers query 2.
    p.segments = {0, 6, 0, 2};
    p.segments.insert(p.segments.end(), c.bad.begin(), c.bad.end());
    p.segments.insert(p.segments.end(), {2, 4, 6, 2});
    p.options.max_query_count = c.max_query_count;
    const auto got = run_search(device(), p);
    EXPECT_EQ(got.word, c.bits);
    EXPECT_EQ(got.positions, (std::vector<int64_t>{0, 2, -1, -1, -1, -1, 2, 5}))
        << "the malformed segment's queries (3..5) and the uncovered one (2) keep their poison";
    expect_matches_reference(device(), p, "malformed");
  }
}

TEST_P(GallopingSearchTest, MaxQueryCountIsAnInclusiveCap) {
  Problem<uint32_t> p;
  p.values = {1, 2, 3};
  p.queries = {1, 2, 3, 4};
  p.segments = {0, 3, 0, 4};
  p.options.max_query_count = 4;
  EXPECT_EQ(run_search(device(), p).word, 0u);
  p.options.max_query_count = 0;
  p.segments = {0, 3, 0, 0, 0, 3, 4, 0};  // empty query ranges fit any cap
  EXPECT_EQ(run_search(device(), p).word, 0u);
}

TEST_P(GallopingSearchTest, EmptySegmentsAreValid) {
  Problem<float> p;
  p.values = {1, 2, 3};
  p.queries = {0, 5, 2};
  // No values (positions = valueOffset), no queries, both, and one at the view's end.
  p.segments = {2, 0, 0, 2, 1, 2, 2, 0, 0, 0, 2, 0, 3, 0, 2, 1};
  const auto got = run_search(device(), p);
  EXPECT_EQ(got.positions, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(got.word, 0u);
  expect_matches_reference(device(), p, "empty segments");
  // No segments at all: nothing written, the word reset.
  p.segments.clear();
  const auto none = run_search(device(), p);
  EXPECT_EQ(none.positions, (std::vector<int64_t>{-1, -1, -1}));
  EXPECT_EQ(none.word, 0u);
  // No values and no queries.
  Problem<float> empty;
  empty.segments = {0, 0, 0, 0};
  EXPECT_EQ(run_search(device(), empty).word, 0u);
}

TEST_P(GallopingSearchTest, ValidationWordIsResetUnlessPreserved) {
  Problem<uint32_t> p;
  p.values = {1, 2, 3};
  p.queries = {3, 1};
  p.segments = {0, 3, 0, 2, 5, 1, 0, 0};  // a decrease (4) and a bad value range (1)
  p.word_before = 0xF0u;
  EXPECT_EQ(run_search(device(), p).word, Errors::kDecreasingQueries | Errors::kValueRange);
  p.options.preserve_validation = true;
  EXPECT_EQ(run_search(device(), p).word, 0xF0u | Errors::kDecreasingQueries | Errors::kValueRange);
  p.queries = {1, 3};
  p.segments = {0, 3, 0, 2};
  p.word_before = Errors::kNonFiniteQuery;
  EXPECT_EQ(run_search(device(), p).word, Errors::kNonFiniteQuery) << "preserved, nothing added";
}

// Many tiles in skewed segments: crosses the CPU driver's chunk boundaries mid-segment
// and over empty segments, at one and two threads.
TEST_P(GallopingSearchTest, SkewedSegmentsAcrossChunksAndThreadCounts) {
  auto rng = rng_for(5);
  Problem<float> p = random_problem<float>(rng, ValueKind::Random, QueryKind::Ordered, false, true, 300, 30, 3);
  // Append a hub segment with 20000 queries over 50000 values.
  const int64_t vo = static_cast<int64_t>(p.values.size());
  auto hub = raw_values<float>(rng, 50000, ValueKind::Clustered);
  std::sort(hub.begin(), hub.end());
  p.values.insert(p.values.end(), hub.begin(), hub.end());
  const auto hq = segment_queries<float>(rng, 20000, QueryKind::Clustered, hub);
  const int64_t qo = static_cast<int64_t>(p.queries.size());
  p.queries.insert(p.queries.end(), hq.begin(), hq.end());
  p.segments.insert(p.segments.end(), {vo, 50000, qo, 20000});
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (int64_t tile : {1, 32, 333}) {
      p.options.queries_per_tile = tile;
      expect_matches_reference(device(), p, detail::concat("threads=", threads, " tile=", tile));
    }
  }
  omp_set_num_threads(saved);
}

// The batched lower_bound overload: one segment over everything.
TEST_P(GallopingSearchTest, BatchedLowerBoundOverloadEqualsStdLowerBound) {
  auto rng = rng_for(6);
  for (int64_t N : {0, 1, 100, 100000}) {
    auto values = raw_values<uint32_t>(rng, N, ValueKind::Duplicates);
    std::sort(values.begin(), values.end());
    for (QueryKind qk : {QueryKind::Ordered, QueryKind::Clustered, QueryKind::Shuffled}) {
      SCOPED_TRACE(detail::concat("N=", N, " queries=", name_of(qk)));
      const auto queries = segment_queries<uint32_t>(rng, 30000, qk, values);
      std::vector<int64_t> want(queries.size());
      for (size_t i = 0; i < queries.size(); ++i)
        want[i] = std::lower_bound(values.begin(), values.end(), queries[i]) - values.begin();
      auto d_values = to_device(values, device());
      auto d_queries = to_device(queries, device());
      auto d_positions = poisoned<int64_t>(static_cast<int64_t>(queries.size()), device());
      Context ctx(device());
      const uint32_t word = galloping_search<uint32_t>(d_values.view(), d_queries.view(), d_positions.view(), ctx);
      EXPECT_TRUE(equal_exactly(d_positions.to_host_vector(), want));
      const bool sorted = std::is_sorted(queries.begin(), queries.end());
      EXPECT_EQ(word, sorted ? 0u : Errors::kDecreasingQueries);
    }
  }
}

// Bad arguments: a clear error naming op and argument; positions and word untouched.
TEST_P(GallopingSearchTest, BadInputThrowsAndLeavesOutputsUntouched) {
  const Device dev = device();
  auto values = to_device(std::vector<float>{1, 2, 3, 4}, dev);
  auto queries = to_device(std::vector<float>{1, 3}, dev);
  auto order = to_device(std::vector<int64_t>{3, 0, 1}, dev);
  auto bad_order = to_device(std::vector<int64_t>{0, 4, -1}, dev);
  auto segments = to_device(std::vector<int64_t>{0, 3, 0, 2}, dev);
  auto positions = poisoned<int64_t>(3, dev);
  auto word = to_device(std::vector<uint32_t>{kPoisonWord, kPoisonWord}, dev);
  const auto vals = values.view();
  const auto qs = queries.view();
  const VectorView<const int64_t> ord = order.view();
  const MatrixView<const int64_t> seg(segments.data(), 1, 4, dev);
  const VectorView<int64_t> pos(positions.data(), 2, dev);
  const VectorView<uint32_t> w(word.data(), 1, dev);
  struct Case {
    std::string needle;
    std::function<void(Context&)> call;
  };
  auto search = [](VectorView<const float> v, VectorView<const int64_t> o, VectorView<const float> q,
                   MatrixView<const int64_t> s, VectorView<int64_t> p, VectorView<uint32_t> vw,
                   GallopingSearchOptions opt = {}) {
    return [=](Context& ctx) { galloping_search<float>(v, o, q, s, p, vw, opt, ctx); };
  };
  GallopingSearchOptions zero_tile, bad_cap;
  zero_tile.queries_per_tile = 0;
  bad_cap.max_query_count = -2;
  const std::vector<Case> cases = {
      {"positions.size() (3) must equal queries.size() (2)",
       search(vals, ord, qs, seg, VectorView<int64_t>(positions.data(), 3, dev), w)},
      {"segments must be [S, 4] records", search(vals, ord, qs, MatrixView<const int64_t>(segments.data(), 1, 3, dev), pos, w)},
      {"validation must be one uint32 word (got size 2)",
       search(vals, ord, qs, seg, pos, VectorView<uint32_t>(word.data(), 2, dev))},
      {"validation must be one uint32 word (got size 0)", search(vals, ord, qs, seg, pos, VectorView<uint32_t>())},
      {"queries_per_tile (0) must be >= 1", search(vals, ord, qs, seg, pos, w, zero_tile)},
      {"max_query_count (-2) must be >= 0, or -1", search(vals, ord, qs, seg, pos, w, bad_cap)},
      {"value_order[1] (4) must lie in [0, 4)", search(vals, bad_order.view(), qs, seg, pos, w)},
      {"queries is null but has 2 elements",
       search(vals, ord, VectorView<const float>(nullptr, 2, dev), seg, pos, w)},
      {"positions must not alias values",
       search(vals, ord, qs, seg, VectorView<int64_t>(reinterpret_cast<int64_t*>(values.data()), 2, dev), w)},
      {"validation must not alias positions",
       search(vals, ord, qs, seg, pos, VectorView<uint32_t>(reinterpret_cast<uint32_t*>(positions.data()), 1, dev))},
      {"batched: queries_per_tile (0) must be >= 1",
       [&](Context& ctx) { galloping_search<float>(vals, qs, pos, ctx, 0); }},
      {"batched: positions.size() (3) must equal queries.size() (2)",
       [&](Context& ctx) { galloping_search<float>(vals, qs, VectorView<int64_t>(positions.data(), 3, dev), ctx); }},
  };
  const auto positions_before = positions.to_host_vector();
  for (const Case& c : cases) {
    Context ctx(dev);
    const std::string needle = c.needle.rfind("batched: ", 0) == 0 ? c.needle.substr(9) : c.needle;
    try {
      c.call(ctx);
      ADD_FAILURE() << "no error for case '" << c.needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("galloping_search: "), std::string::npos) << e.what();
    }
    EXPECT_EQ(positions.to_host_vector(), positions_before) << "positions changed for case '" << c.needle << "'";
    EXPECT_EQ(word.to_host_vector(), (std::vector<uint32_t>{kPoisonWord, kPoisonWord}))
        << "word changed for case '" << c.needle << "'";
  }
}

TEST_P(GallopingSearchTest, TrustedValueOrderWithValidationOff) {
  // A trusted index: ctx.validate = false skips the O(O) range check (the entries
  // here are in range, so the search itself is well defined).
  Problem<float> p;
  p.values = {30, 10, 20};
  p.order = std::vector<int64_t>{1, 2, 0};
  p.queries = {15, 30};
  p.segments = {0, 3, 0, 2};
  auto d_values = to_device(p.values, device());
  auto d_order = to_device(*p.order, device());
  auto d_queries = to_device(p.queries, device());
  auto d_segments = to_device(p.segments, device());
  auto d_positions = poisoned<int64_t>(2, device());
  auto d_word = poisoned<uint32_t>(1, device());
  Context ctx(device());
  ctx.validate = false;
  galloping_search<float>(d_values.view(), d_order.view(), d_queries.view(), d_segments.matrix(1, 4),
                          d_positions.view(), d_word.view(), {}, ctx);
  EXPECT_EQ(d_positions.to_host_vector(), (std::vector<int64_t>{1, 2})) << "positions in the value_order view";
  EXPECT_EQ(d_word.to_host_vector()[0], 0u);
}

INSTANTIATE_TEST_SUITE_P(Devices, GallopingSearchTest, testing::ValuesIn(all_devices()), device_name);

TEST(GallopingSearchDevices, MixedDevicesAreAnErrorNotACopy) {
  std::vector<float> values = {1, 2};
  std::vector<float> queries = {1};
  std::vector<int64_t> segments = {0, 2, 0, 1};
  std::vector<int64_t> positions = {-1};
  std::vector<uint32_t> word = {7};
  Context cuda_ctx(Device::cuda(0));
  try {
    galloping_search<float>(VectorView<const float>(values.data(), 2), {}, VectorView<const float>(queries.data(), 1),
                            MatrixView<const int64_t>(segments.data(), 1, 4), VectorView<int64_t>(positions.data(), 1),
                            VectorView<uint32_t>(word.data(), 1), {}, cuda_ctx);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("values is on cpu but the context is on cuda:0"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(positions[0], -1);
  EXPECT_EQ(word[0], 7u);
}

TEST(GallopingSearchDevices, DefaultContextOverloadGivesTheSameAnswer) {
  std::vector<uint32_t> values = {1, 3, 5};
  std::vector<uint32_t> queries = {0, 3, 4, 9};
  std::vector<int64_t> segments = {0, 3, 0, 4};
  std::vector<int64_t> positions(4, -1);
  std::vector<uint32_t> word = {99};
  galloping_search<uint32_t>(VectorView<const uint32_t>(values.data(), 3), {},
                             VectorView<const uint32_t>(queries.data(), 4),
                             MatrixView<const int64_t>(segments.data(), 1, 4), VectorView<int64_t>(positions.data(), 4),
                             VectorView<uint32_t>(word.data(), 1));
  EXPECT_EQ(positions, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(word[0], 0u);
}

}  // namespace
}  // namespace edgewise::test
