// Draws from a CounterRng that the generators need beyond uniforms: Poisson counts,
// standard normals, power-law picks, and stream ids for typed nodes. Written out
// rather than std:: distributions, whose results differ between standard libraries.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

// Poisson(mean) by inversion, one uniform per chunk of the mean: a sum of Poisson
// draws is Poisson, and chunks of at most 16 keep exp(-chunk) far from underflow.
inline int64_t poisson(CounterRng& rng, double mean) {
  constexpr double kChunk = 16;
  int64_t count = 0;
  while (mean > 0) {
    const double m = std::min(mean, kChunk);
    mean -= m;
    const double u = rng.uniform();
    double p = std::exp(-m), cdf = p;
    int64_t k = 0;
    // p > 0: a u above the rounded cdf's limit ends the walk when p underflows.
    while (u >= cdf && p > 0) {
      ++k;
      p *= m / static_cast<double>(k);
      cdf += p;
    }
    count += k;
  }
  return count;
}

// Standard normals into out[0 .. n), Box-Muller, two per pair of uniforms; 1 - u
// keeps the logarithm's argument in (0, 1].
inline void fill_standard_normal(CounterRng& rng, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - rng.uniform()));
    const double angle = 2.0 * std::numbers::pi * rng.uniform();
    out[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < n) out[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

// One of `count` candidates, index floor(count * u^skew): low indices are popular
// (degrees follow a power law of exponent 1 / skew). The min guards u^skew's
// rounding up to 1.
inline int64_t skewed_pick(CounterRng& rng, int64_t count, double skew) {
  const double scaled = static_cast<double>(count) * std::pow(rng.uniform(), skew);
  return std::min(static_cast<int64_t>(scaled), count - 1);
}

// The stream id of item `id` (< 2^56) of kind `tag` (a node type, an edge type):
// the tag in the top 8 bits, so different kinds never share a stream.
inline uint64_t typed_stream_id(uint64_t tag, int64_t id) { return tag << 56 | static_cast<uint64_t>(id); }

}  // namespace edgewise::gnn
