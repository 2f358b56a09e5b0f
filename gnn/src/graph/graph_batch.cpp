// Minibatches of graphs as one disjoint union, with the batch vector and graph offsets.
#include "edgewise/gnn/graph/graph_batch.hpp"

#include <algorithm>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"
#include "edgewise/kernels/run_length_encode.hpp"

namespace edgewise::gnn {

GraphBatch make_graph_batch(const GraphDataset& data, std::span<const int64_t> graph_ids, Device device) {
  EW_REQUIRE(data.num_features > 0, "make_graph_batch: graph dataset '", data.name,
             "' has no node features (add_one_hot_degree_features makes some)");
  int64_t nodes = 0, edges = 0;
  for (size_t b = 0; b < graph_ids.size(); ++b) {
    const int64_t g = graph_ids[b];
    EW_REQUIRE(g >= 0 && g < data.num_graphs(), "make_graph_batch: graph_ids[", b, "] (", g, ") is outside [0, ",
               data.num_graphs(), ")");
    nodes += data.graph_nodes(g);
    edges += data.edge_offsets[g + 1] - data.edge_offsets[g];
  }
  const int64_t f = data.num_features;
  std::vector<int64_t> src(static_cast<size_t>(edges)), dst(static_cast<size_t>(edges));
  std::vector<float> x(static_cast<size_t>(nodes * f));
  std::vector<int32_t> batch(static_cast<size_t>(nodes));
  std::vector<int64_t> labels(graph_ids.size());
  int64_t node_at = 0, edge_at = 0;
  for (size_t b = 0; b < graph_ids.size(); ++b) {
    const int64_t g = graph_ids[b];
    const int64_t n = data.graph_nodes(g);
    for (int64_t e = data.edge_offsets[g]; e < data.edge_offsets[g + 1]; ++e, ++edge_at) {
      src[static_cast<size_t>(edge_at)] = node_at + data.src[static_cast<size_t>(e)];
      dst[static_cast<size_t>(edge_at)] = node_at + data.dst[static_cast<size_t>(e)];
    }
    std::copy_n(data.features.begin() + data.node_offsets[g] * f, n * f, x.begin() + node_at * f);
    std::fill_n(batch.begin() + node_at, n, static_cast<int32_t>(b));
    labels[b] = data.labels[static_cast<size_t>(g)];
    node_at += n;
  }
  GraphBatch out;
  Graph host_graph = Graph::from_coo(src, dst, nodes);
  out.graph = device.is_cpu() ? host_graph : host_graph.to(device);
  out.x = Tensor::from_host(x, nodes, f, device);
  out.batch = IntTensor::from_host(batch, nodes, 1, device);
  out.labels = IndexTensor::from_host(labels, static_cast<int64_t>(labels.size()), 1, device);
  out.graph_offsets = graph_offsets_from_batch(out.batch, static_cast<int64_t>(graph_ids.size()));
  return out;
}

IndexTensor graph_offsets_from_batch(const IntTensor& batch, int64_t num_graphs) {
  EW_REQUIRE(num_graphs >= 0, "graph_offsets_from_batch: num_graphs (", num_graphs, ") must be >= 0");
  IndexTensor offsets(num_graphs + 1, 1, batch.device());
  offsets_from_keys(batch.cflat(), offsets.flat());
  return offsets;
}

BatchRuns batch_runs(const IntTensor& batch) {
  const int64_t n = batch.numel();
  Buffer<int32_t> values(n, batch.device());
  Buffer<int64_t> lengths(n, batch.device());
  const int64_t runs = run_length_encode(batch.cflat(), VectorView<int32_t>{values.data(), n, batch.device()},
                                         VectorView<int64_t>{lengths.data(), n, batch.device()});
  BatchRuns out;
  out.graphs.resize(static_cast<size_t>(runs));
  out.nodes.resize(static_cast<size_t>(runs));
  copy_bytes(out.graphs.data(), Device::cpu(), values.data(), batch.device(), out.graphs.size() * sizeof(int32_t));
  copy_bytes(out.nodes.data(), Device::cpu(), lengths.data(), batch.device(), out.nodes.size() * sizeof(int64_t));
  return out;
}

}  // namespace edgewise::gnn
