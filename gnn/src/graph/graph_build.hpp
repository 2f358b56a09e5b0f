// The steps of building and deriving a Graph that no kernel primitive covers
// (checks, gathers, fills, GCN weights), each on the device of its views: the CPU
// in graph_build_cpu.cpp, CUDA in graph_build_cuda.cu (on the engine's stream),
// chosen in graph_build.cpp. Sorting, offsets and degrees use the primitives.
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/view.hpp"

namespace edgewise::gnn::graph_build {

// The first position of each kind of bad COO input, -1 where there is none.
struct CooErrors {
  int64_t src = -1;     // src[e] outside [0, num_nodes)
  int64_t dst = -1;     // dst[e] outside [0, num_nodes)
  int64_t weight = -1;  // weight[e] not finite (weight absent: never)
};

// Every function takes views on one device; optional views are absent when null.
#define EW_GRAPH_BUILD_DECLARATIONS                                                                           \
  CooErrors first_invalid(VectorView<const int64_t> src, VectorView<const int64_t> dst, int64_t num_nodes,   \
                          VectorView<const float> weight);                                                    \
  /* out[k] = in[index[k]] (index absent: in[k]), converted to Out; k in [0, out.size). */                   \
  template <class In, class Out>                                                                              \
  void gather(VectorView<const In> in, VectorView<const int64_t> index, VectorView<Out> out);                 \
  template <class T>                                                                                          \
  void fill(VectorView<T> out, T value);                                                                      \
  /* out[k] = k. */                                                                                           \
  void iota(VectorView<int64_t> out);                                                                         \
  /* out[s] = offsets[s + 1] - offsets[s] (segment lengths, as float), s in [0, out.size). */                \
  void segment_lengths(VectorView<const int64_t> offsets, VectorView<float> out);                             \
  /* has_loop[v] = 1 when some edge k has sources[k] == destinations[k] == v, else 0. */                      \
  void mark_self_loops(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,             \
                       VectorView<int32_t> has_loop);                                                          \
  /* out[k] = degree[src_k]^-1/2 * weight[k] (1 when absent) * degree[dst_k]^-1/2. */                        \
  void gcn_weights(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,                 \
                   VectorView<const float> degree, VectorView<const float> weight, VectorView<float> out);

EW_GRAPH_BUILD_DECLARATIONS

namespace cpu {
EW_GRAPH_BUILD_DECLARATIONS
}  // namespace cpu

namespace cuda {
EW_GRAPH_BUILD_DECLARATIONS
}  // namespace cuda

// The conversions instantiated (by every backend and the dispatch), as (In, Out).
#define EW_GRAPH_BUILD_GATHERS(X) \
  X(int64_t, int32_t)             \
  X(int64_t, int64_t)             \
  X(int32_t, int32_t)             \
  X(int32_t, int64_t)             \
  X(int32_t, float)               \
  X(float, float)                 \
  X(float, double)                \
  X(double, float)
#define EW_GRAPH_BUILD_FILLS(X) \
  X(int32_t)                    \
  X(float)

}  // namespace edgewise::gnn::graph_build
