// Device dispatch of the graph-building steps (graph_build.hpp).
#include "graph/graph_build.hpp"

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::graph_build {

namespace {
[[noreturn, maybe_unused]] void built_without_cuda() {
  detail::throw_invalid_argument("Graph: edgewise was built without CUDA");
}
}  // namespace

#if EDGEWISE_WITH_CUDA
#define EW_GRAPH_DISPATCH(device, ...) ((device).is_cpu() ? cpu::__VA_ARGS__ : cuda::__VA_ARGS__)
#else
#define EW_GRAPH_DISPATCH(device, ...) \
  ((device).is_cpu() ? cpu::__VA_ARGS__ : (built_without_cuda(), cpu::__VA_ARGS__))
#endif

CooErrors first_invalid(VectorView<const int64_t> src, VectorView<const int64_t> dst, int64_t num_nodes,
                        VectorView<const float> weight) {
  return EW_GRAPH_DISPATCH(src.device, first_invalid(src, dst, num_nodes, weight));
}

template <class In, class Out>
void gather(VectorView<const In> in, VectorView<const int64_t> index, VectorView<Out> out) {
  EW_GRAPH_DISPATCH(out.device, gather<In, Out>(in, index, out));
}

template <class T>
void fill(VectorView<T> out, T value) {
  EW_GRAPH_DISPATCH(out.device, fill<T>(out, value));
}

void iota(VectorView<int64_t> out) { EW_GRAPH_DISPATCH(out.device, iota(out)); }

void segment_lengths(VectorView<const int64_t> offsets, VectorView<float> out) {
  EW_GRAPH_DISPATCH(out.device, segment_lengths(offsets, out));
}

void mark_self_loops(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                     VectorView<int32_t> has_loop) {
  EW_GRAPH_DISPATCH(has_loop.device, mark_self_loops(sources, destinations, has_loop));
}

void gcn_weights(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                 VectorView<const float> degree, VectorView<const float> weight, VectorView<float> out) {
  EW_GRAPH_DISPATCH(out.device, gcn_weights(sources, destinations, degree, weight, out));
}

#define EW_INSTANTIATE_GATHER(In, Out) \
  template void gather<In, Out>(VectorView<const In>, VectorView<const int64_t>, VectorView<Out>);
EW_GRAPH_BUILD_GATHERS(EW_INSTANTIATE_GATHER)
#define EW_INSTANTIATE_FILL(T) template void fill<T>(VectorView<T>, T);
EW_GRAPH_BUILD_FILLS(EW_INSTANTIATE_FILL)

}  // namespace edgewise::gnn::graph_build
