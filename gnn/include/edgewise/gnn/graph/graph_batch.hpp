// Minibatches of graphs: the chosen graphs of a GraphDataset merged into one
// disjoint union Graph (node ids shifted by each graph's offset in the batch), with
// the `batch` vector (the batch position of every node) and the graph offsets that
// global pooling reduces over. Message passing on the union never crosses graphs,
// so one set of kernels serves the whole minibatch.
#pragma once

#include <cstdint>
#include <span>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn {

struct GraphBatch {
  Graph graph;                // the disjoint union: N nodes, E edges
  Tensor x;                   // [N, F] node features
  IntTensor batch;            // [N, 1] position in the batch (0..B-1) of each node's graph, nondecreasing
  IndexTensor graph_offsets;  // [B + 1, 1] graph b owns union nodes [offsets[b], offsets[b+1])
  IndexTensor labels;         // [B, 1] class of each graph
  int64_t num_graphs() const { return labels.rows(); }
};

// Merges the graphs `graph_ids` (in this order; repeats allowed) of `data` into
// one batch on `device`. Throws std::invalid_argument for an id outside
// [0, num_graphs) or a dataset without features.
GraphBatch make_graph_batch(const GraphDataset& data, std::span<const int64_t> graph_ids,
                            Device device = Device::cpu());

// Graph offsets [num_graphs + 1, 1] from a nondecreasing batch vector (values in
// [0, num_graphs)): offsets_from_keys, so graphs without nodes get empty ranges.
IndexTensor graph_offsets_from_batch(const IntTensor& batch, int64_t num_graphs);

// The runs of a batch vector (run_length_encode): the graphs that have nodes, in
// order, and their node counts.
struct BatchRuns {
  std::vector<int32_t> graphs;
  std::vector<int64_t> nodes;
};
BatchRuns batch_runs(const IntTensor& batch);

}  // namespace edgewise::gnn
