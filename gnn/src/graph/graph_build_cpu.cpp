// Graph-building steps on the CPU: OpenMP loops over edges or nodes; each iteration
// writes only its own element, so no atomics (mark_self_loops writes the same 1).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "graph/graph_build.hpp"
#include "graph/graph_build_core.hpp"

namespace edgewise::gnn::graph_build::cpu {

namespace {
constexpr int64_t kParallelFrom = int64_t{1} << 16;  // below this a loop is cheaper than waking threads
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
}  // namespace

CooErrors first_invalid(VectorView<const int64_t> src, VectorView<const int64_t> dst, int64_t num_nodes,
                        VectorView<const float> weight) {
  const int64_t E = src.size;
  const int64_t* s = src.data;
  const int64_t* d = dst.data;
  const float* w = weight.data;
  int64_t bad_src = kNone, bad_dst = kNone, bad_weight = kNone;
#pragma omp parallel for reduction(min : bad_src, bad_dst, bad_weight) if (E > kParallelFrom)
  for (int64_t e = 0; e < E; ++e) {
    if (!core::node_in_range(s[e], num_nodes)) bad_src = std::min(bad_src, e);
    if (!core::node_in_range(d[e], num_nodes)) bad_dst = std::min(bad_dst, e);
    if (w != nullptr && !core::finite(w[e])) bad_weight = std::min(bad_weight, e);
  }
  auto found = [](int64_t e) { return e == kNone ? int64_t{-1} : e; };
  return {found(bad_src), found(bad_dst), found(bad_weight)};
}

template <class In, class Out>
void gather(VectorView<const In> in, VectorView<const int64_t> index, VectorView<Out> out) {
  const In* from = in.data;
  const int64_t* idx = index.data;
  Out* to = out.data;
  const int64_t n = out.size;
#pragma omp parallel for if (n > kParallelFrom)
  for (int64_t k = 0; k < n; ++k) core::gather(from, idx, to, k);
}

template <class T>
void fill(VectorView<T> out, T value) {
  T* to = out.data;
  const int64_t n = out.size;
#pragma omp parallel for if (n > kParallelFrom)
  for (int64_t k = 0; k < n; ++k) to[k] = value;
}

void iota(VectorView<int64_t> out) {
  int64_t* to = out.data;
  const int64_t n = out.size;
#pragma omp parallel for if (n > kParallelFrom)
  for (int64_t k = 0; k < n; ++k) to[k] = k;
}

void segment_lengths(VectorView<const int64_t> offsets, VectorView<float> out) {
  const int64_t* off = offsets.data;
  float* to = out.data;
  const int64_t n = out.size;
#pragma omp parallel for if (n > kParallelFrom)
  for (int64_t s = 0; s < n; ++s) to[s] = static_cast<float>(off[s + 1] - off[s]);
}

void mark_self_loops(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                     VectorView<int32_t> has_loop) {
  fill<int32_t>(has_loop, 0);
  const int32_t* s = sources.data;
  const int32_t* d = destinations.data;
  int32_t* flag = has_loop.data;
  const int64_t E = sources.size;
  for (int64_t k = 0; k < E; ++k) {  // a plain loop: concurrent writes of 1 would race in the C++ model
    if (s[k] == d[k]) flag[s[k]] = 1;
  }
}

void gcn_weights(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                 VectorView<const float> degree, VectorView<const float> weight, VectorView<float> out) {
  const int32_t* s = sources.data;
  const int32_t* d = destinations.data;
  const float* deg = degree.data;
  const float* w = weight.data;
  float* to = out.data;
  const int64_t E = out.size;
#pragma omp parallel for if (E > kParallelFrom)
  for (int64_t k = 0; k < E; ++k) to[k] = core::gcn_weight(s, d, deg, w, k);
}

#define EW_INSTANTIATE_GATHER(In, Out) \
  template void gather<In, Out>(VectorView<const In>, VectorView<const int64_t>, VectorView<Out>);
EW_GRAPH_BUILD_GATHERS(EW_INSTANTIATE_GATHER)
#define EW_INSTANTIATE_FILL(T) template void fill<T>(VectorView<T>, T);
EW_GRAPH_BUILD_FILLS(EW_INSTANTIATE_FILL)

}  // namespace edgewise::gnn::graph_build::cpu
