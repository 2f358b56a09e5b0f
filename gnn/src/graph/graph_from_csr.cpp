// Graph::from_csr: a Graph from a CSR by destination that a caller already built
// (the samplers' blocks), validated once, without the sort of from_coo; uploaded on
// the engine stream.
#include <cmath>
#include <numeric>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

Graph Graph::from_csr(std::span<const int64_t> offsets, std::span<const int32_t> sources,
                      std::span<const float> edge_weight, Device device) {
  constexpr const char* kOp = "Graph::from_csr";
  EW_REQUIRE(!offsets.empty(), kOp, ": offsets must hold N + 1 >= 1 values");
  const int64_t N = static_cast<int64_t>(offsets.size()) - 1;
  const int64_t E = static_cast<int64_t>(sources.size());
  EW_REQUIRE(N < (int64_t{1} << 31), kOp, ": num_nodes (", N, ") must lie in [0, 2^31)");
  EW_REQUIRE(offsets[0] == 0, kOp, ": offsets[0] (", offsets[0], ") must be 0");
  EW_REQUIRE(offsets[N] == E, kOp, ": offsets[", N, "] (", offsets[N], ") must equal the number of sources (", E,
             ")");
  for (int64_t v = 0; v < N; ++v) {
    EW_REQUIRE(offsets[v] <= offsets[v + 1], kOp, ": offsets[", v + 1, "] (", offsets[v + 1],
               ") is smaller than offsets[", v, "] (", offsets[v], ")");
  }
  for (int64_t k = 0; k < E; ++k) {
    EW_REQUIRE(sources[k] >= 0 && sources[k] < N, kOp, ": sources[", k, "] (", sources[k], ") must lie in [0, ", N,
               ")");
  }
  EW_REQUIRE(edge_weight.empty() || static_cast<int64_t>(edge_weight.size()) == E, kOp, ": edge_weight has ",
             edge_weight.size(), " values for ", E, " edges");
  for (size_t k = 0; k < edge_weight.size(); ++k) {
    EW_REQUIRE(std::isfinite(edge_weight[k]), kOp, ": edge_weight[", k, "] (", edge_weight[k], ") must be finite");
  }

  auto impl = std::make_shared<Impl>();
  impl->num_nodes = N;
  impl->num_edges = E;
  impl->device = device;
  std::vector<int32_t> destinations(static_cast<size_t>(E));
  for (int64_t v = 0; v < N; ++v) {
    std::fill(destinations.begin() + offsets[v], destinations.begin() + offsets[v + 1], static_cast<int32_t>(v));
  }
  std::vector<int64_t> edge_ids(static_cast<size_t>(E));
  std::iota(edge_ids.begin(), edge_ids.end(), int64_t{0});
  impl->offsets = upload(offsets, device);
  impl->sources = upload(sources, device);
  impl->destinations = upload(std::span<const int32_t>(destinations), device);
  impl->edge_ids = upload(std::span<const int64_t>(edge_ids), device);
  if (!edge_weight.empty()) impl->edge_weight = Tensor::from_host(edge_weight, E, 1, device);
  Graph g;
  g.impl_ = impl;
  return g;
}

}  // namespace edgewise::gnn
