// planted_partition: stochastic block model graph, topic bag-of-words features,
// planetoid-style split.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "edgewise/kernels/common/counter_rng.hpp"
#include "data/edge_list.hpp"
#include "data/parallel.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "planted_partition";

void check_params(const PlantedPartitionParams& p) {
  EW_REQUIRE(p.num_nodes >= 1 && p.num_nodes <= (int64_t{1} << 32), kOp, ": num_nodes (", p.num_nodes,
             ") must lie in [1, 2^32]");
  EW_REQUIRE(p.num_classes >= 1 && p.num_classes <= p.num_nodes, kOp, ": num_classes (", p.num_classes,
             ") must lie in [1, num_nodes = ", p.num_nodes, "]");
  EW_REQUIRE(p.average_degree >= 0 && std::isfinite(p.average_degree), kOp, ": average_degree (", p.average_degree,
             ") must be finite and >= 0");
  EW_REQUIRE(p.homophily >= 0 && p.homophily <= 1, kOp, ": homophily (", p.homophily, ") must lie in [0, 1]");
  EW_REQUIRE(p.num_features == 0 || p.num_features >= p.num_classes, kOp, ": num_features (", p.num_features,
             ") must be 0 or >= num_classes (", p.num_classes, ") so that every class has topic words");
  EW_REQUIRE(p.num_features <= std::numeric_limits<int32_t>::max(), kOp, ": num_features (", p.num_features,
             ") exceeds the int32 column range");
  EW_REQUIRE(p.feature_density >= 0 && p.feature_density <= 1, kOp, ": feature_density (", p.feature_density,
             ") must lie in [0, 1]");
  EW_REQUIRE(p.feature_signal >= 0 && p.feature_signal <= 1, kOp, ": feature_signal (", p.feature_signal,
             ") must lie in [0, 1]");
  EW_REQUIRE(p.train_per_class >= 0 && p.num_valid >= 0 && p.num_test >= 0, kOp,
             ": train_per_class, num_valid and num_test must be >= 0 (got ", p.train_per_class, ", ", p.num_valid,
             ", ", p.num_test, ")");
}

// Appends the pairs of one block, each present with probability p, by geometric
// skipping over the block's pair sequence (Batagelj & Brandes 2005): O(edges).
// Diagonal block: pairs (i, j), j < i, of `a`; off-diagonal: all of a x b.
void sample_block(const std::vector<int64_t>& a, const std::vector<int64_t>& b, bool diagonal, double p,
                  int bits, CounterRng& rng, std::vector<uint64_t>& keys) {
  if (p <= 0) return;
  const int64_t na = static_cast<int64_t>(a.size()), nb = static_cast<int64_t>(b.size());
  const double pairs = diagonal ? 0.5 * static_cast<double>(na) * static_cast<double>(na - 1)
                                : static_cast<double>(na) * static_cast<double>(nb);
  const double log_q = p < 1 ? std::log1p(-p) : 0.0;
  const auto skip = [&]() -> int64_t {
    if (p >= 1) return 0;
    const double s = std::floor(std::log1p(-rng.uniform()) / log_q);
    return s >= pairs ? static_cast<int64_t>(pairs) + 1 : static_cast<int64_t>(s);
  };
  if (diagonal) {
    int64_t v = 1, w = -1;
    while (v < na) {
      w += 1 + skip();
      while (w >= v && v < na) {
        w -= v;
        ++v;
      }
      if (v < na)
        keys.push_back(edge_key(static_cast<uint64_t>(a[static_cast<size_t>(v)]),
                                static_cast<uint64_t>(a[static_cast<size_t>(w)]), bits));
    }
  } else {
    const int64_t total = na * nb;
    for (int64_t t = skip(); t < total; t += 1 + skip())
      keys.push_back(edge_key(static_cast<uint64_t>(a[static_cast<size_t>(t / nb)]),
                              static_cast<uint64_t>(b[static_cast<size_t>(t % nb)]), bits));
  }
}

// The distinct words of node v (sorted) into `words`.
void node_words(const PlantedPartitionParams& p, uint64_t seed, int64_t v, int64_t label, std::vector<int32_t>& words) {
  words.clear();
  const int64_t F = p.num_features, K = p.num_classes;
  CounterRng rng(seed, kSaltFeatures, static_cast<uint64_t>(v));
  const double mean = p.feature_density * static_cast<double>(F);
  const int64_t m = std::min<int64_t>(F, std::llround(mean * (0.5 + rng.uniform())));
  const int64_t topic_lo = label * F / K, topic_size = (label + 1) * F / K - topic_lo;
  for (int64_t i = 0; i < m; ++i) {
    const bool topical = rng.uniform() < p.feature_signal;
    const uint64_t w = topical ? static_cast<uint64_t>(topic_lo) + rng.below(static_cast<uint64_t>(topic_size))
                               : rng.below(static_cast<uint64_t>(F));
    words.push_back(static_cast<int32_t>(w));
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
}

}  // namespace

Dataset planted_partition(const PlantedPartitionParams& p, uint64_t seed) {
  check_params(p);
  const int64_t N = p.num_nodes, K = p.num_classes;
  Dataset d;
  d.name = "planted_partition";
  d.num_nodes = N;
  d.num_classes = K;
  d.labels.resize(static_cast<size_t>(N));
#pragma omp parallel for schedule(static) if (N >= kMinParallelWork)
  for (int64_t v = 0; v < N; ++v)
    d.labels[static_cast<size_t>(v)] =
        static_cast<int64_t>(CounterRng(seed, kSaltClass, static_cast<uint64_t>(v)).below(static_cast<uint64_t>(K)));
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(K));
  for (int64_t v = 0; v < N; ++v) members[static_cast<size_t>(d.labels[static_cast<size_t>(v)])].push_back(v);

  // Edge probabilities from the expected undirected edge count M = N * degree / 2.
  double pairs_in = 0;
  for (const auto& m : members) pairs_in += 0.5 * static_cast<double>(m.size()) * static_cast<double>(m.size() - 1);
  const double pairs_all = 0.5 * static_cast<double>(N) * static_cast<double>(N - 1);
  const double pairs_out = pairs_all - pairs_in;
  const double M = static_cast<double>(N) * p.average_degree / 2;
  const double want_in = p.homophily * M, want_out = (1 - p.homophily) * M;
  const double p_in = want_in > 0 ? want_in / pairs_in : 0.0;
  const double p_out = want_out > 0 ? want_out / pairs_out : 0.0;
  EW_REQUIRE(p_in <= 1 && p_out <= 1, kOp, ": average_degree ", p.average_degree, " with homophily ", p.homophily,
             " needs edge probabilities ", p_in, " within and ", p_out, " across classes; both must be <= 1 (",
             "more nodes or a lower degree)");

  // One counter stream per block pair, sampled in parallel, concatenated in block order.
  std::vector<std::pair<int64_t, int64_t>> blocks;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t l = k; l < K; ++l) blocks.emplace_back(k, l);
  const int64_t B = static_cast<int64_t>(blocks.size());
  const int bits = node_bits(N);
  std::vector<std::vector<uint64_t>> block_keys(static_cast<size_t>(B));
#pragma omp parallel for schedule(dynamic, 1) if (N >= kMinParallelWork / 16)
  for (int64_t i = 0; i < B; ++i) {
    const auto [k, l] = blocks[static_cast<size_t>(i)];
    CounterRng rng(seed, kSaltEdges, static_cast<uint64_t>(k * K + l));
    sample_block(members[static_cast<size_t>(k)], members[static_cast<size_t>(l)], k == l, k == l ? p_in : p_out, bits,
                 rng, block_keys[static_cast<size_t>(i)]);
  }
  std::vector<uint64_t> keys;
  for (const auto& bk : block_keys) keys.insert(keys.end(), bk.begin(), bk.end());
  block_keys = {};
  d.edge_index =
      canonical_edge_index(N, std::move(keys), {.remove_self_loops = true, .symmetrize = true, .deduplicate = true});

  // Features: CSR built in two passes over the per-node word streams.
  Features& f = d.features;
  f.rows = N;
  f.cols = p.num_features;
  f.format = FeatureFormat::Sparse;
  CsrMatrix& m = f.csr;
  m.rows = N;
  m.cols = p.num_features;
  m.offsets.assign(static_cast<size_t>(N) + 1, 0);
  if (p.num_features > 0) {
#pragma omp parallel if (N * p.num_features >= kMinParallelWork)
    {
      std::vector<int32_t> words;
#pragma omp for schedule(static)
      for (int64_t v = 0; v < N; ++v) {
        node_words(p, seed, v, d.labels[static_cast<size_t>(v)], words);
        m.offsets[static_cast<size_t>(v) + 1] = static_cast<int64_t>(words.size());
      }
#pragma omp single
      {
        for (int64_t v = 0; v < N; ++v) m.offsets[static_cast<size_t>(v) + 1] += m.offsets[static_cast<size_t>(v)];
        m.indices.resize(static_cast<size_t>(m.offsets.back()));
        m.values.assign(static_cast<size_t>(m.offsets.back()), 1.0f);
      }
#pragma omp for schedule(static)
      for (int64_t v = 0; v < N; ++v) {
        node_words(p, seed, v, d.labels[static_cast<size_t>(v)], words);
        std::copy(words.begin(), words.end(), m.indices.begin() + m.offsets[static_cast<size_t>(v)]);
      }
    }
  }
  if (p.features == FeatureFormat::Dense ||
      (p.features == FeatureFormat::Auto && f.density() > LoadOptions{}.sparse_threshold))
    f.to_dense();

  // Planetoid-style split over a seeded random order of the nodes.
  std::vector<uint64_t> key(static_cast<size_t>(N));
  for (int64_t v = 0; v < N; ++v) key[static_cast<size_t>(v)] = CounterRng(seed, kSaltSplit, static_cast<uint64_t>(v)).next();
  std::vector<int64_t> order(static_cast<size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return key[static_cast<size_t>(x)] != key[static_cast<size_t>(y)] ? key[static_cast<size_t>(x)] < key[static_cast<size_t>(y)]
                                                                      : x < y;
  });
  std::vector<int64_t> taken(static_cast<size_t>(K), 0), rest;
  for (int64_t v : order) {
    int64_t& t = taken[static_cast<size_t>(d.labels[static_cast<size_t>(v)])];
    if (t < p.train_per_class) {
      ++t;
      d.train_idx.push_back(v);
    } else {
      rest.push_back(v);
    }
  }
  const int64_t n_valid = std::min<int64_t>(p.num_valid, static_cast<int64_t>(rest.size()));
  const int64_t n_test = std::min<int64_t>(p.num_test, static_cast<int64_t>(rest.size()) - n_valid);
  d.valid_idx.assign(rest.begin(), rest.begin() + n_valid);
  d.test_idx.assign(rest.begin() + n_valid, rest.begin() + n_valid + n_test);
  for (auto* list : {&d.train_idx, &d.valid_idx, &d.test_idx}) std::sort(list->begin(), list->end());
  return d;
}

}  // namespace edgewise::gnn
