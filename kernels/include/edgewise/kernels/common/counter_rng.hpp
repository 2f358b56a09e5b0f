// Counter-based randomness for host code that must not depend on thread counts or
// platforms (the data generators, splits, shuffles, negative sampling): value i of
// stream (seed, purpose, id) is a pure function of the three, so parallel loops give
// the same numbers on any number of threads and std:: distributions (which differ
// between standard libraries) are never used. splitmix64's mixer. The engine's other
// family is Philox (philox.hpp: per-element draws shared by the CPU and GPU kernels,
// dropout, sampling on a SegmentTree); these two are the only generators Edgewise uses.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace edgewise {

__extension__ typedef unsigned __int128 CounterRngUint128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet

// splitmix64's finaliser: a bijective, well-mixing 64-bit hash.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Purposes, one list for the whole project, so that streams for different jobs
// never coincide.
enum RngSalt : uint64_t {
  kSaltClass = 1,          // planted partition: class of a node
  kSaltEdges = 2,          // planted partition: edges of a block pair
  kSaltFeatures = 3,       // generators: node features
  kSaltSplit = 4,          // generators: train / valid / test membership
  kSaltRmat = 5,           // R-MAT: edge draws
  kSaltScramble = 6,       // R-MAT: id scrambling
  kSaltLabels = 7,         // R-MAT: labels
  kSaltRandomSplit = 8,    // readers: Shchur et al.'s random split per class
  kSaltGraphFolds = 9,     // graph collections: stratified folds
  kSaltSyntheticGraphs = 10,  // graph collections: the synthetic two-class set
  kSaltBatchOrder = 11,    // training: the order of minibatches per epoch
  kSaltCalibration = 12,   // aggregation cost model: synthetic calibration graphs
  kSaltCommunity = 13,     // mag-like generator: planted community of a typed node
  kSaltTypedEdges = 14,    // mag-like generator: out-edges of a typed source node
  kSaltCentroids = 15,     // mag-like generator: feature centroid of a community
  kSaltNegativePairs = 0x4C494E4B00000001ull,  // link prediction: negative pairs
  kSaltLinkShuffle = 0x4C494E4B00000002ull,    // link prediction: split shuffle
  kSaltSplitNegatives = 0x4C494E4B00000003ull,  // link prediction: valid / test negatives
  kSaltTrainNegatives = 0x4C494E4B00000004ull,  // link prediction: per-epoch training negatives
};

// A key for stream `id` of purpose `salt` under `seed`.
inline uint64_t stream_key(uint64_t seed, uint64_t salt, uint64_t id) {
  return mix64(mix64(seed ^ mix64(salt)) ^ id);
}

class CounterRng {
 public:
  CounterRng(uint64_t seed, uint64_t salt, uint64_t id) : key_(stream_key(seed, salt, id)) {}
  uint64_t next() { return mix64(key_ + 0x9E3779B97F4A7C15ull * ++counter_); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n) (multiply-shift; bias below 2^-64 * n, negligible here).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<CounterRngUint128>(next()) * n) >> 64); }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// Fisher-Yates with `rng`: the same permutation on every platform.
template <class T>
void shuffle(std::vector<T>& v, CounterRng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

}  // namespace edgewise
