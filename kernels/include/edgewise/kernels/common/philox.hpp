// Philox4x32-10 counter-based RNG (Salmon et al., SC'11; Random123), written once
// for CPU and CUDA threads (EW_HD): a draw is a pure function of (key, counter), so
// any thread on any device computes the same numbers for the same draw.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise {

// Four 32-bit words: a Philox counter, and also one Philox output block.
struct PhiloxBlock {
  uint32_t v[4];
};

// Two 32-bit words of key.
struct PhiloxKey {
  uint32_t v[2];
};

namespace philox_detail {
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

EW_HD_INLINE void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

EW_HD_INLINE PhiloxBlock single_round(PhiloxBlock c, PhiloxKey k) {
  uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kMul0, c.v[0], hi0, lo0);
  mulhilo(kMul1, c.v[2], hi1, lo1);
  return PhiloxBlock{{hi1 ^ c.v[1] ^ k.v[0], lo1, hi0 ^ c.v[3] ^ k.v[1], lo0}};
}
}  // namespace philox_detail

// Philox4x32 with 10 rounds: the block for `counter` under `key`. Matches the
// Random123 known-answer vectors (tests/kernels/test_philox.cpp).
EW_HD_INLINE PhiloxBlock philox4x32_10(PhiloxBlock counter, PhiloxKey key) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {  // the key schedule bumps the key before every round but the first
      key.v[0] += philox_detail::kWeyl0;
      key.v[1] += philox_detail::kWeyl1;
    }
    counter = philox_detail::single_round(counter, key);
  }
  return counter;
}

// The block for draw `index` of stream `stream` under `seed`: key = seed (low word
// first), counter = (index low, index high, stream low, stream high). Distinct
// (stream, index) pairs never share a counter, so users of one seed (a sampler,
// dropout of each layer, ...) pick distinct streams and never see correlated bits.
EW_HD_INLINE PhiloxBlock philox_block(uint64_t seed, uint64_t stream, uint64_t index) {
  const PhiloxKey key{{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  const PhiloxBlock counter{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                             static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)}};
  return philox4x32_10(counter, key);
}

// Uniform float in [0, 1) from the top 24 bits of `bits` (exact: k * 2^-24).
EW_HD_INLINE float uniform_float(uint32_t bits) {
  return static_cast<float>(bits >> 8) * 0x1.0p-24f;
}

// Uniform double in [0, 1) from 53 bits: the top 27 of `hi`, the top 26 of `lo`
// (exact: k * 2^-53, so the value is the same wherever it is computed).
EW_HD_INLINE double uniform_double(uint32_t hi, uint32_t lo) {
  const uint64_t k = (static_cast<uint64_t>(hi >> 5) << 26) | static_cast<uint64_t>(lo >> 6);
  return static_cast<double>(k) * 0x1.0p-53;
}

}  // namespace edgewise
