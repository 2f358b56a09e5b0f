// rmat_graph: counter-based parallel R-MAT edges, id scrambling, canonical edge
// list, optional random features, labels and split.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "edgewise/kernels/common/counter_rng.hpp"
#include "data/edge_list.hpp"
#include "data/parallel.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "rmat_graph";
constexpr int kMaxAttempts = 64;

// A seeded bijection on [0, 2^bits): odd multiplications, additions and
// xor-shifts, each invertible modulo 2^bits.
struct BitPermutation {
  int bits;
  uint64_t mask, mul[3], add[3];
  BitPermutation(int bits_, uint64_t seed) : bits(bits_), mask(bits_ >= 64 ? ~0ull : (1ull << bits_) - 1) {
    CounterRng rng(seed, kSaltScramble, 0);
    for (int i = 0; i < 3; ++i) {
      mul[i] = rng.next() | 1;
      add[i] = rng.next();
    }
  }
  uint64_t operator()(uint64_t x) const {
    const int shift = (bits + 1) / 2;
    for (int i = 0; i < 3; ++i) {
      x = (x * mul[i] + add[i]) & mask;
      x ^= x >> shift;
    }
    return x;
  }
};

// A bijection on [0, n) by cycle walking the one on [0, 2^bits) (n <= 2^bits):
// the walk from x < n returns below n because x's own cycle does.
inline int64_t scramble(int64_t x, int64_t n, const BitPermutation& perm) {
  uint64_t y = static_cast<uint64_t>(x);
  do y = perm(y);
  while (y >= static_cast<uint64_t>(n));
  return static_cast<int64_t>(y);
}

// R-MAT descends `levels` levels per random draw: the 4^levels outcomes of a
// multi-level descent (each the product of its quadrants' probabilities) in a
// Walker/Vose alias table, so a draw costs one lookup instead of `levels` compares.
// Outcome o holds the quadrant of level l (0 = highest) in bits 2(levels-1-l)+{1,0}
// (row, column).
class RmatTable {
 public:
  RmatTable(int levels, const double (&quadrant)[4]) : levels_(levels) {
    const size_t n = size_t{1} << (2 * levels);
    threshold_.resize(n);
    alias_.resize(n);
    row_.resize(n);
    col_.resize(n);
    std::vector<double> scaled(n);
    for (size_t o = 0; o < n; ++o) {
      double p = 1;
      uint32_t row = 0, col = 0;
      for (int l = 0; l < levels; ++l) {
        const size_t q = (o >> (2 * (levels - 1 - l))) & 3;
        p *= quadrant[q];
        row = row << 1 | static_cast<uint32_t>(q >> 1);
        col = col << 1 | static_cast<uint32_t>(q & 1);
      }
      scaled[o] = p * static_cast<double>(n);
      row_[o] = row;
      col_[o] = col;
    }
    // Vose: pair each under-full slot with an over-full donor (ascending order, so
    // the table is a fixed function of the probabilities).
    std::vector<size_t> small, large;
    for (size_t o = 0; o < n; ++o) (scaled[o] < 1 ? small : large).push_back(o);
    for (size_t o = 0; o < n; ++o) alias_[o] = static_cast<uint32_t>(o);
    while (!small.empty() && !large.empty()) {
      const size_t s = small.back(), l = large.back();
      small.pop_back();
      threshold_[s] = static_cast<uint64_t>(scaled[s] * 4294967296.0);
      alias_[s] = static_cast<uint32_t>(l);
      scaled[l] -= 1 - scaled[s];
      if (scaled[l] < 1) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (size_t o : large) threshold_[o] = uint64_t{1} << 32;  // always itself
    for (size_t o : small) threshold_[o] = uint64_t{1} << 32;  // rounding leftovers
  }
  int levels() const { return levels_; }
  // One descent of levels() levels: appends its row and column bits to u and v.
  void descend(uint64_t r, int64_t& u, int64_t& v) const {
    const size_t slot = static_cast<size_t>(r & (threshold_.size() - 1));
    const size_t o = (r >> 32) < threshold_[slot] ? slot : alias_[slot];
    u = (u << levels_) | row_[o];
    v = (v << levels_) | col_[o];
  }

 private:
  int levels_;
  std::vector<uint64_t> threshold_;  // keep the slot when the high 32 bits are below this
  std::vector<uint32_t> alias_, row_, col_;
};

constexpr int kLevelsPerDraw = 5;  // 1024-entry tables: fit in L1

}  // namespace

Dataset rmat_graph(int64_t num_nodes, int64_t num_edges, double a, double b, double c, uint64_t seed,
                   const RmatOptions& options) {
  const int64_t N = num_nodes, E = num_edges;
  EW_REQUIRE(N >= 1 && N <= (int64_t{1} << 32), kOp, ": num_nodes (", N, ") must lie in [1, 2^32]");
  EW_REQUIRE(E >= 0, kOp, ": num_edges (", E, ") must be >= 0");
  const double d = 1.0 - a - b - c;
  EW_REQUIRE(a >= 0 && a <= 1 && b >= 0 && b <= 1 && c >= 0 && c <= 1 && d >= -1e-9, kOp, ": a, b, c (", a, ", ",
             b, ", ", c, ") must lie in [0, 1] with a + b + c <= 1");
  EW_REQUIRE(options.num_features >= 0 && options.num_classes >= 0, kOp, ": num_features (", options.num_features,
             ") and num_classes (", options.num_classes, ") must be >= 0");
  EW_REQUIRE(options.train_fraction >= 0 && options.valid_fraction >= 0 &&
                 options.train_fraction + options.valid_fraction <= 1,
             kOp, ": train_fraction (", options.train_fraction, ") and valid_fraction (", options.valid_fraction,
             ") must be >= 0 with a sum <= 1");
  int scale = 0;
  while ((int64_t{1} << scale) < N) ++scale;

  const double quadrant[4] = {a, b, c, std::max(0.0, d)};
  const RmatTable full(kLevelsPerDraw, quadrant), rest(scale % kLevelsPerDraw, quadrant);
  const int full_draws = scale / kLevelsPerDraw;
  const BitPermutation perm(scale, seed);
  const int bits = node_bits(N);
  std::vector<uint64_t> keys(static_cast<size_t>(E));
#pragma omp parallel for schedule(static) if (E >= kMinParallelWork / 16)
  for (int64_t e = 0; e < E; ++e) {
    CounterRng rng(seed, kSaltRmat, static_cast<uint64_t>(e));
    int64_t u = 0, v = 0;
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
      u = v = 0;
      for (int i = 0; i < full_draws; ++i) full.descend(rng.next(), u, v);
      if (rest.levels() > 0) rest.descend(rng.next(), u, v);
      if (u < N && v < N) break;
    }
    u %= N;  // only after kMaxAttempts rejections
    v %= N;
    if (options.scramble_ids) {
      u = scramble(u, N, perm);
      v = scramble(v, N, perm);
    }
    keys[static_cast<size_t>(e)] = edge_key(static_cast<uint64_t>(u), static_cast<uint64_t>(v), bits);
  }

  Dataset g;
  g.name = "rmat";
  g.num_nodes = N;
  g.edge_index = canonical_edge_index(N, std::move(keys),
                                      {.remove_self_loops = options.remove_self_loops,
                                       .symmetrize = options.symmetrize,
                                       .deduplicate = options.deduplicate});

  const int64_t F = options.num_features;
  g.features.rows = N;
  g.features.cols = F;
  g.features.format = FeatureFormat::Dense;
  if (F > 0) {
    g.features.dense.resize(static_cast<size_t>(N * F));
    float* x = g.features.dense.data();
#pragma omp parallel for schedule(static) if (N * F >= kMinParallelWork)
    for (int64_t v = 0; v < N; ++v) {
      CounterRng rng(seed, kSaltFeatures, static_cast<uint64_t>(v));
      for (int64_t j = 0; j < F; ++j) x[v * F + j] = static_cast<float>(2.0 * rng.uniform() - 1.0);
    }
  }
  const int64_t C = options.num_classes;
  if (C > 0) {
    g.num_classes = C;
    g.labels.resize(static_cast<size_t>(N));
    std::vector<uint8_t> split(static_cast<size_t>(N));
#pragma omp parallel for schedule(static) if (N >= kMinParallelWork / 4)
    for (int64_t v = 0; v < N; ++v) {
      g.labels[static_cast<size_t>(v)] =
          static_cast<int64_t>(CounterRng(seed, kSaltLabels, static_cast<uint64_t>(v)).below(static_cast<uint64_t>(C)));
      const double r = CounterRng(seed, kSaltSplit, static_cast<uint64_t>(v)).uniform();
      split[static_cast<size_t>(v)] = r < options.train_fraction ? 0
                                      : r < options.train_fraction + options.valid_fraction ? 1
                                                                                             : 2;
    }
    for (int64_t v = 0; v < N; ++v) {
      auto& list = split[static_cast<size_t>(v)] == 0 ? g.train_idx : split[static_cast<size_t>(v)] == 1 ? g.valid_idx : g.test_idx;
      list.push_back(v);
    }
  }
  return g;
}

}  // namespace edgewise::gnn
