// Graph-building steps on CUDA: grid-stride kernels over edges or nodes on the
// engine's stream for the device; first_invalid reads three words back.
#include <cuda_runtime.h>

#include <cstdint>

#include "edgewise/kernels/common/buffer.hpp"
#include "graph/graph_build.hpp"
#include "graph/graph_build_core.hpp"
#include "tensor/for_each_cuda.cuh"

namespace edgewise::gnn::graph_build::cuda {

using gnn::cuda_launch::copy_to_host;
using gnn::cuda_launch::for_each;
using gnn::cuda_launch::on_device;

CooErrors first_invalid(VectorView<const int64_t> src, VectorView<const int64_t> dst, int64_t num_nodes,
                        VectorView<const float> weight) {
  const cudaStream_t stream = on_device(src.device);
  // The lowest bad position of each kind, by atomicMin (positions are >= 0).
  Buffer<unsigned long long> d_first(3, src.device);
  unsigned long long* first = d_first.data();
  for_each(stream, 3, [=] __device__(int64_t i) { first[i] = ~0ULL; });
  const int64_t* s = src.data;
  const int64_t* d = dst.data;
  const float* w = weight.data;
  for_each(stream, src.size, [=] __device__(int64_t e) {
    const auto pos = static_cast<unsigned long long>(e);
    if (!core::node_in_range(s[e], num_nodes)) atomicMin(first, pos);
    if (!core::node_in_range(d[e], num_nodes)) atomicMin(first + 1, pos);
    if (w != nullptr && !core::finite(w[e])) atomicMin(first + 2, pos);
  });
  unsigned long long h_first[3];
  copy_to_host(h_first, first, 3, stream);
  auto found = [](unsigned long long e) { return e == ~0ULL ? int64_t{-1} : static_cast<int64_t>(e); };
  return {found(h_first[0]), found(h_first[1]), found(h_first[2])};
}

template <class In, class Out>
void gather(VectorView<const In> in, VectorView<const int64_t> index, VectorView<Out> out) {
  const cudaStream_t stream = on_device(out.device);
  const In* from = in.data;
  const int64_t* idx = index.data;
  Out* to = out.data;
  for_each(stream, out.size, [=] __device__(int64_t k) { core::gather(from, idx, to, k); });
}

template <class T>
void fill(VectorView<T> out, T value) {
  const cudaStream_t stream = on_device(out.device);
  T* to = out.data;
  for_each(stream, out.size, [=] __device__(int64_t k) { to[k] = value; });
}

void iota(VectorView<int64_t> out) {
  const cudaStream_t stream = on_device(out.device);
  int64_t* to = out.data;
  for_each(stream, out.size, [=] __device__(int64_t k) { to[k] = k; });
}

void segment_lengths(VectorView<const int64_t> offsets, VectorView<float> out) {
  const cudaStream_t stream = on_device(out.device);
  const int64_t* off = offsets.data;
  float* to = out.data;
  for_each(stream, out.size, [=] __device__(int64_t s) { to[s] = static_cast<float>(off[s + 1] - off[s]); });
}

void mark_self_loops(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                     VectorView<int32_t> has_loop) {
  fill<int32_t>(has_loop, 0);
  const cudaStream_t stream = on_device(has_loop.device);
  const int32_t* s = sources.data;
  const int32_t* d = destinations.data;
  int32_t* flag = has_loop.data;
  for_each(stream, sources.size, [=] __device__(int64_t k) {
    if (s[k] == d[k]) flag[s[k]] = 1;  // every writer stores the same 1
  });
}

void gcn_weights(VectorView<const int32_t> sources, VectorView<const int32_t> destinations,
                 VectorView<const float> degree, VectorView<const float> weight, VectorView<float> out) {
  const cudaStream_t stream = on_device(out.device);
  const int32_t* s = sources.data;
  const int32_t* d = destinations.data;
  const float* deg = degree.data;
  const float* w = weight.data;
  float* to = out.data;
  for_each(stream, out.size, [=] __device__(int64_t k) { to[k] = core::gcn_weight(s, d, deg, w, k); });
}

#define EW_INSTANTIATE_GATHER(In, Out) \
  template void gather<In, Out>(VectorView<const In>, VectorView<const int64_t>, VectorView<Out>);
EW_GRAPH_BUILD_GATHERS(EW_INSTANTIATE_GATHER)
#define EW_INSTANTIATE_FILL(T) template void fill<T>(VectorView<T>, T);
EW_GRAPH_BUILD_FILLS(EW_INSTANTIATE_FILL)

}  // namespace edgewise::gnn::graph_build::cuda
