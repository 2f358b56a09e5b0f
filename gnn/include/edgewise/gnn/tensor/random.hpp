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

  // Everything that determines the numbers to come: saving it and restoring it
  // later (a checkpoint) continues the same sequence of streams.
  struct State {
    uint64_t seed = 0;
    uint64_t next_stream = 0;
    friend bool operator==(const State&, const State&) = default;
  };
  State state() const noexcept { return {seed_, next_stream_}; }
  void set_state(const State& state) noexcept {
    seed_ = state.seed;
    next_stream_ = state.next_stream;
  }

 private:
  uint64_t seed_;
  uint64_t next_stream_ = 0;
};

}  // namespace edgewise::gnn
