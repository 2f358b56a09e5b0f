// Edge features: permuted once from input order into CSR order, so every kernel reads
// them alongside sources() / destinations() without an indirection.
#include "graph/edge_attr.hpp"

#include <algorithm>
#include <cmath>

#include "edgewise/kernels/common/check.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

Graph Graph::with_edge_attr(const Tensor& edge_attr) const {
  constexpr const char* kOp = "Graph::with_edge_attr";
  EW_REQUIRE(defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(edge_attr.defined(), kOp, ": edge_attr is undefined");
  EW_REQUIRE(edge_attr.rows() == num_edges(), kOp, ": edge_attr ", edge_attr.shape_str(), " has ", edge_attr.rows(),
             " rows for ", num_edges(), " edges");
  EW_REQUIRE(edge_attr.cols() >= 1, kOp, ": edge_attr ", edge_attr.shape_str(), " must have at least one column");
  const int64_t E = num_edges(), D = edge_attr.cols();
  const std::vector<float> in = host_vector(edge_attr.data(), edge_attr.numel(), edge_attr.device());
  for (size_t i = 0; i < in.size(); ++i) {
    EW_REQUIRE(std::isfinite(in[i]), kOp, ": edge_attr[", static_cast<int64_t>(i) / D, ", ",
               static_cast<int64_t>(i) % D, "] (", in[i], ") must be finite");
  }
  const std::vector<int64_t> input_position = host_vector(edge_ids().data(), E, device());
  std::vector<float> csr(in.size());
  for (int64_t k = 0; k < E; ++k) {
    const float* row = in.data() + input_position[k] * D;
    std::copy(row, row + D, csr.data() + k * D);
  }
  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes();
  impl->num_edges = E;
  impl->device = device();
  impl->offsets = copy_of(offsets(), device());
  impl->sources = copy_of(sources(), device());
  impl->destinations = copy_of(destinations(), device());
  impl->edge_ids = copy_of(edge_ids(), device());
  impl->edge_weight = edge_weight();
  impl->edge_attr = Tensor(E, D, device());
  copy_bytes(impl->edge_attr.data(), device(), csr.data(), Device::cpu(), csr.size() * sizeof(float),
             engine_stream(device()));
  Graph g;
  g.impl_ = impl;
  return g;
}

Tensor edge_attr_with_mean_loops(const Graph& graph, const std::vector<int64_t>& loop_nodes) {
  const int64_t E = graph.num_edges(), D = graph.edge_attr().cols(), N = graph.num_nodes();
  const std::vector<float> attr = host_vector(graph.edge_attr().data(), E * D, graph.device());
  const std::vector<int64_t> offsets = host_vector(graph.offsets().data(), N + 1, graph.device());
  std::vector<float> out(attr);
  out.reserve(static_cast<size_t>((E + static_cast<int64_t>(loop_nodes.size())) * D));
  std::vector<double> mean(static_cast<size_t>(D));
  for (int64_t v : loop_nodes) {
    EW_REQUIRE(v >= 0 && v < N, "edge_attr_with_mean_loops: loop node ", v, " must lie in [0, ", N, ")");
    std::fill(mean.begin(), mean.end(), 0.0);
    // The incoming edges of v are the CSR rows [offsets[v], offsets[v+1]).
    for (int64_t k = offsets[v]; k < offsets[v + 1]; ++k) {
      for (int64_t d = 0; d < D; ++d) mean[d] += attr[k * D + d];
    }
    const int64_t count = offsets[v + 1] - offsets[v];
    for (int64_t d = 0; d < D; ++d) out.push_back(count > 0 ? static_cast<float>(mean[d] / count) : 0.0f);
  }
  return Tensor::from_host(out, E + static_cast<int64_t>(loop_nodes.size()), D);
}

}  // namespace edgewise::gnn
