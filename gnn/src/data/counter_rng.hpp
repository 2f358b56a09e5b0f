// Counter-based randomness for the generators: value i of stream (seed, id) is a
// pure function of (seed, id, i), so parallel loops give the same numbers for
// any thread count. splitmix64's mixer; not the kernels' Philox (that one is for
// CPU/GPU-shared sampling).
#pragma once

#include <cstdint>

namespace edgewise::gnn {

__extension__ typedef unsigned __int128 Uint128;  // GCC/Clang; __extension__ keeps -Wpedantic quiet

// splitmix64's finaliser: a bijective, well-mixing 64-bit hash.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

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
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<Uint128>(next()) * n) >> 64); }

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// Purposes, so streams for different jobs never coincide.
enum RngSalt : uint64_t {
  kSaltClass = 1,
  kSaltEdges = 2,
  kSaltFeatures = 3,
  kSaltSplit = 4,
  kSaltRmat = 5,
  kSaltScramble = 6,
  kSaltLabels = 7,
  kSaltRandomSplit = 8,
};

}  // namespace edgewise::gnn
