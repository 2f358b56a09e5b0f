// Sequential oracles for sddmm and its backward, in double: obviously correct, never
// optimised. The backward scatters over the FORWARD edges, so it shares nothing with the
// transposed gathers (edge_gather_sum) it checks.
#pragma once

#include <cstdint>
#include <vector>

namespace edgewise::reference {

// Destination row of every edge of a CSR.
inline std::vector<int64_t> destinations_ref(const std::vector<int64_t>& offsets) {
  std::vector<int64_t> dst;
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) dst.push_back(static_cast<int64_t>(v));
  }
  return dst;
}

// out[e, h] = sum_d x[src_e, h*D + d] * y[dst_e, h*D + d]   (x [N, H*D], y [S, H*D]).
template <class T, class I>
std::vector<double> sddmm_dot_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                                  const std::vector<T>& x, const std::vector<T>& y, int64_t H, int64_t D) {
  const auto dst = destinations_ref(offsets);
  std::vector<double> out(indices.size() * static_cast<size_t>(H), 0.0);
  for (size_t e = 0; e < indices.size(); ++e) {
    for (int64_t h = 0; h < H; ++h) {
      double acc = 0;
      for (int64_t d = 0; d < D; ++d) {
        acc += static_cast<double>(x[static_cast<int64_t>(indices[e]) * H * D + h * D + d]) *
               static_cast<double>(y[dst[e] * H * D + h * D + d]);
      }
      out[e * H + h] = acc;
    }
  }
  return out;
}

// out[e, h] = a[src_e, h] + b[dst_e, h].
template <class T, class I>
std::vector<double> sddmm_add_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                                  const std::vector<T>& a, const std::vector<T>& b, int64_t H) {
  const auto dst = destinations_ref(offsets);
  std::vector<double> out(indices.size() * static_cast<size_t>(H), 0.0);
  for (size_t e = 0; e < indices.size(); ++e) {
    for (int64_t h = 0; h < H; ++h) {
      out[e * H + h] = static_cast<double>(a[static_cast<int64_t>(indices[e]) * H + h]) +
                       static_cast<double>(b[dst[e] * H + h]);
    }
  }
  return out;
}

// Gradients of sum(g * sddmm_dot(x, y)) by scattering every edge's contribution.
struct DotGradRef {
  std::vector<double> grad_x, grad_y;
};
template <class T, class I>
DotGradRef sddmm_dot_grad_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                              const std::vector<T>& x, const std::vector<T>& y, const std::vector<T>& g, int64_t N,
                              int64_t H, int64_t D) {
  const auto dst = destinations_ref(offsets);
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  DotGradRef r{std::vector<double>(static_cast<size_t>(N * H * D), 0.0),
               std::vector<double>(static_cast<size_t>(S * H * D), 0.0)};
  for (size_t e = 0; e < indices.size(); ++e) {
    const int64_t u = static_cast<int64_t>(indices[e]);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t d = 0; d < D; ++d) {
        const int64_t c = h * D + d;
        r.grad_x[u * H * D + c] += static_cast<double>(g[e * H + h]) * static_cast<double>(y[dst[e] * H * D + c]);
        r.grad_y[dst[e] * H * D + c] += static_cast<double>(g[e * H + h]) * static_cast<double>(x[u * H * D + c]);
      }
    }
  }
  return r;
}

// Gradients of sum(g * sddmm_add(a, b)): grad_a[u] = sum of g over edges out of u,
// grad_b[v] = sum of g over edges into v.
struct AddGradRef {
  std::vector<double> grad_a, grad_b;
};
template <class T, class I>
AddGradRef sddmm_add_grad_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                              const std::vector<T>& g, int64_t N, int64_t H) {
  const auto dst = destinations_ref(offsets);
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  AddGradRef r{std::vector<double>(static_cast<size_t>(N * H), 0.0), std::vector<double>(static_cast<size_t>(S * H), 0.0)};
  for (size_t e = 0; e < indices.size(); ++e) {
    for (int64_t h = 0; h < H; ++h) {
      r.grad_a[static_cast<int64_t>(indices[e]) * H + h] += static_cast<double>(g[e * H + h]);
      r.grad_b[dst[e] * H + h] += static_cast<double>(g[e * H + h]);
    }
  }
  return r;
}

// Multi-head attention aggregation: out[v, h*D + d] = sum_{e in seg(v)} w[e, h] x[src_e, h*D + d].
template <class T, class I>
std::vector<double> weighted_aggregate_ref(const std::vector<int64_t>& offsets, const std::vector<I>& indices,
                                           const std::vector<T>& w, const std::vector<T>& x, int64_t H, int64_t D) {
  const int64_t S = static_cast<int64_t>(offsets.size()) - 1;
  std::vector<double> out(static_cast<size_t>(S * H * D), 0.0);
  for (int64_t v = 0; v < S; ++v) {
    for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
      for (int64_t c = 0; c < H * D; ++c) {
        out[v * H * D + c] += static_cast<double>(w[e * H + c / D]) *
                              static_cast<double>(x[static_cast<int64_t>(indices[e]) * H * D + c]);
      }
    }
  }
  return out;
}

}  // namespace edgewise::reference
