// SplitMix64: a tiny seeded generator whose sequence is the same on every platform
// (std:: distributions are not), for the graph task's shuffles, folds and synthetic data.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace edgewise::gnn {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n >= 1; the modulo bias is negligible for small n).
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// Fisher-Yates.
template <class T>
void shuffle(std::vector<T>& v, SplitMix64& rng) {
  for (int64_t i = static_cast<int64_t>(v.size()) - 1; i > 0; --i)
    std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(rng.below(i + 1))]);
}

}  // namespace edgewise::gnn
