// Generator: the engine's seeded source of randomness. Every random op takes a
// fresh stream id from it and draws counter-based Philox numbers keyed by
// (seed, stream, index), so results do not depend on devices or thread counts.
#pragma once

#include <cstdint>

namespace edgewise::gnn {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}
  uint64_t seed() const noexcept { return seed_; }
  // A new stream id for one random op (dropout mask, initialisation, sampling).
  uint64_t next_stream() noexcept { return next_stream_++; }
  void reseed(uint64_t seed) noexcept {
    seed_ = seed;
    next_stream_ = 0;
  }

 private:
  uint64_t seed_;
  uint64_t next_stream_ = 0;
};

}  // namespace edgewise::gnn
