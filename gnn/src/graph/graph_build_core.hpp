// Per-edge and per-node steps of building a Graph, shared by the CPU loops and the
// CUDA threads (graph_build_cpu.cpp, graph_build_cuda.cu).
#pragma once

#include <cmath>
#include <cstdint>

#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::gnn::graph_build::core {

EW_HD_INLINE bool node_in_range(int64_t id, int64_t num_nodes) { return id >= 0 && id < num_nodes; }

EW_HD_INLINE bool finite(float w) {
#if defined(__CUDA_ARCH__)
  return isfinite(w);
#else
  return std::isfinite(w);
#endif
}

// out[k] = in[index[k]] (index absent: in[k]), converted.
template <class In, class Out>
EW_HD_INLINE void gather(const In* in, const int64_t* index, Out* out, int64_t k) {
  out[k] = static_cast<Out>(in[index != nullptr ? index[k] : k]);
}

// 1 / sqrt(degree), 0 for an isolated node (PyG's gcn_norm masks inf to 0).
EW_HD_INLINE float inv_sqrt_degree(float degree) {
#if defined(__CUDA_ARCH__)
  return degree > 0 ? 1.0f / sqrtf(degree) : 0.0f;  // IEEE sqrt and division: the CPU's result
#else
  return degree > 0 ? 1.0f / std::sqrt(degree) : 0.0f;
#endif
}

// Kipf & Welling's edge weight deg(src)^-1/2 * w * deg(dst)^-1/2.
EW_HD_INLINE float gcn_weight(const int32_t* sources, const int32_t* destinations, const float* degree,
                              const float* weight, int64_t k) {
  const float w = weight != nullptr ? weight[k] : 1.0f;
  return inv_sqrt_degree(degree[sources[k]]) * w * inv_sqrt_degree(degree[destinations[k]]);
}

}  // namespace edgewise::gnn::graph_build::core
