// NeighborSampler: GraphSAGE minibatches — per-layer fan-outs of uniformly sampled
// in-neighbours, relabelled to local ids, one bipartite CSR block per layer (DGL's
// blocks, PyG's NeighborLoader).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::gnn {

namespace sampling {
struct SortedRows;
}

// One layer of a minibatch: the bipartite graph from the layer's source nodes to its
// destination nodes, over LOCAL ids.
//
// Sizes: num_src source nodes, num_dst destination nodes (num_dst <= num_src), E edges.
//
// src_nodes [num_src, 1]  int64 global ids of the local ids 0..num_src-1, all distinct.
//                         The first num_dst ARE the destination nodes, in order (DGL's
//                         convention), so a layer's output rows for its destination
//                         nodes are the first rows of its input and line up with the
//                         next layer's input; the other source nodes follow in
//                         ascending global id.
// graph                   num_nodes() == num_src; CSR by local destination: the edges
//                         of destination i (i < num_dst) are at [offsets[i],
//                         offsets[i+1]); rows num_dst..num_src-1 have no edges. An edge
//                         (u -> i) is the local source u of a sampled in-edge of
//                         src_nodes[i]. Within a row the edges are in ascending global
//                         source id. Edge weights: none (NeighborSampler), importance
//                         weights (LayerwiseSampler, layerwise_sampler.hpp).
// edge_ids  [E, 1]        int64: the CSR position, in the sampled-from graph, of each
//                         block edge (to gather edge features or weights).
//
// A layer's conv applied to block.graph gives num_src output rows; rows [0, num_dst)
// are the destination nodes' (block_dst_rows in minibatch.hpp takes them).
struct Block {
  Graph graph;
  int64_t num_src = 0;
  int64_t num_dst = 0;
  IndexTensor src_nodes;
  IndexTensor edge_ids;
};

// A sampled minibatch: blocks outermost first (blocks[0] is the model's first layer
// and reads the input features; blocks.back() produces the seeds' outputs), so
// blocks[l].num_dst == blocks[l + 1].num_src and
// blocks[l].src_nodes[0, num_dst) == blocks[l + 1].src_nodes.
struct MiniBatch {
  std::vector<Block> blocks;
  IndexTensor input_nodes;  // [num_src of blocks[0], 1]: global ids whose features the model reads
  IndexTensor seed_nodes;   // [B, 1]: the seeds, in the order given (= the last block's destinations)
  int64_t num_layers() const { return static_cast<int64_t>(blocks.size()); }
};

struct NeighborSamplerOptions {
  // Where blocks and id tensors are delivered; empty (the default): the graph's device.
  // Sampling itself runs on the host (see NeighborSampler).
  std::optional<Device> device;
};

// Uniform neighbour sampling without replacement.
//
// fanouts [L]: fanouts[l] is the number of in-neighbours sampled per destination node
//   of block l (the model's layer l, outermost first; DGL's MultiLayerNeighborSampler
//   order). The LAST entry samples the seeds' neighbours, so {10, 25} takes 25
//   neighbours of every seed and 10 of every one of those — PyG's num_neighbors
//   [25, 10], which lists hops from the seeds. Each entry is >= 1, or -1 for every
//   in-neighbour.
//
// Per destination node v of degree d (in-edges, so multi-edges count separately),
// min(fanout, d) distinct in-edges are drawn uniformly without replacement (Floyd's
// algorithm); every subset of that size is equally likely. The randomness is
// counter-based: Philox keyed by (generator seed, one stream per layer, v, draw), so
// a minibatch is a pure function of (graph, fanouts, seeds, generator state) — the
// same for any OpenMP thread count. Each sample() call takes one stream per layer
// from the generator.
//
// Relabelling (per layer): the destination nodes and every sampled source are
// sorted (sort_by_key) and de-duplicated (run_length_encode); a sampled global id
// finds its local id by galloping_search over the sorted unique ids (queries
// ascending within each destination's list).
//
// Sampling runs on the host with OpenMP over the destination nodes; blocks are
// delivered on the graph's device (or options.device). The sampler keeps a host CSR
// whose rows list sources in ascending id: the graph itself when it is on the host
// with sorted rows (datasets usually are), else a copy. sample() is const and may be
// called from several threads at once (each with its own Generator).
class NeighborSampler {
 public:
  // Throws std::invalid_argument for an empty fanout list or an entry that is 0 or < -1.
  NeighborSampler(const Graph& graph, std::vector<int64_t> fanouts, NeighborSamplerOptions options = {});

  // Seeds: distinct node ids in [0, N), any order (B = seeds.size(), may be 0).
  // Throws std::invalid_argument naming the first out-of-range or repeated seed
  // (the generator is then not advanced).
  MiniBatch sample(std::span<const int64_t> seed_nodes, Generator& generator) const;
  // The same with the seeds in a host or device IndexTensor (any shape, read flat).
  MiniBatch sample(const IndexTensor& seed_nodes, Generator& generator) const;

  const std::vector<int64_t>& fanouts() const noexcept { return fanouts_; }
  const Graph& graph() const noexcept { return graph_; }
  Device output_device() const noexcept { return device_; }

 private:
  Graph graph_;
  std::vector<int64_t> fanouts_;
  Device device_;
  std::shared_ptr<const sampling::SortedRows> rows_;  // host CSR, rows by ascending source
};

}  // namespace edgewise::gnn
