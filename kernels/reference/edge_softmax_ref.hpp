// Sequential oracle for edge_softmax and its backward, in long double with the textbook
// two-pass max-subtracted formula (never optimised, no online rescaling).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace edgewise::reference {

template <class T>
std::vector<double> edge_softmax_ref(const std::vector<int64_t>& offsets, const std::vector<T>& scores, int64_t H) {
  std::vector<double> out(scores.size(), 0.0);
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    for (int64_t h = 0; h < H; ++h) {
      long double m = -INFINITY;
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) m = std::max<long double>(m, scores[e * H + h]);
      long double total = 0;
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) total += std::exp(static_cast<long double>(scores[e * H + h]) - m);
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        out[e * H + h] = static_cast<double>(std::exp(static_cast<long double>(scores[e * H + h]) - m) / total);
      }
    }
  }
  return out;
}

// grad_s[e] = y[e] * (g[e] - sum_{e' in seg} g[e'] y[e']), from the forward output y.
template <class T>
std::vector<double> edge_softmax_backward_ref(const std::vector<int64_t>& offsets, const std::vector<T>& y,
                                              const std::vector<T>& g, int64_t H) {
  std::vector<double> out(y.size(), 0.0);
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    for (int64_t h = 0; h < H; ++h) {
      long double dot = 0;
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) dot += static_cast<long double>(g[e * H + h]) * y[e * H + h];
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        out[e * H + h] = static_cast<double>(y[e * H + h] * (static_cast<long double>(g[e * H + h]) - dot));
      }
    }
  }
  return out;
}

}  // namespace edgewise::reference
