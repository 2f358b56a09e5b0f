// to_minibatch: per-layer CSR blocks from the hop counts of a hop-wise sample.
#include "edgewise/gnn/sampling/subgraph_blocks.hpp"

#include <numeric>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

MiniBatch to_minibatch(const SampledSubgraph& sample, Device device) {
  constexpr const char* kOp = "to_minibatch";
  EW_REQUIRE(sample.batch.empty(), kOp, ": disjoint samples (one subgraph per seed) have no shared blocks");
  const auto& nodes = sample.num_sampled_nodes;
  const auto& edges = sample.num_sampled_edges;
  const int64_t L = static_cast<int64_t>(edges.size());
  EW_REQUIRE(L >= 1 && static_cast<int64_t>(nodes.size()) == L + 1, kOp, ": the sample needs one node count per hop ",
             "and one more for the seeds (got ", nodes.size(), " and ", edges.size(), " edge counts)");
  MiniBatch mb;
  mb.blocks.resize(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    const int64_t keep = L - l;  // hops whose nodes are destinations
    const int64_t num_dst = std::accumulate(nodes.begin(), nodes.begin() + keep, int64_t{0});
    const int64_t num_src = num_dst + nodes[keep];
    const int64_t E = std::accumulate(edges.begin(), edges.begin() + keep, int64_t{0});
    std::vector<int64_t> offsets(static_cast<size_t>(num_src + 1), 0);
    std::vector<int32_t> sources(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      EW_REQUIRE(sample.col[e] < num_dst && (e == 0 || sample.col[e - 1] <= sample.col[e]), kOp,
                 ": edges must be grouped by destination, hop by hop (edge ", e, ")");
      ++offsets[sample.col[e] + 1];
      sources[e] = static_cast<int32_t>(sample.row[e]);
    }
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    Block& block = mb.blocks[l];
    block.graph = Graph::from_csr(offsets, sources, {}, device);
    block.num_src = num_src;
    block.num_dst = num_dst;
    block.src_nodes = IndexTensor::from_host(std::span<const int64_t>(sample.node.data(), num_src), num_src, 1, device);
    block.edge_ids = IndexTensor::from_host(std::span<const int64_t>(sample.edge.data(), E), E, 1, device);
  }
  mb.input_nodes = mb.blocks.front().src_nodes;
  mb.seed_nodes = IndexTensor::from_host(std::span<const int64_t>(sample.node.data(), nodes[0]), nodes[0], 1, device);
  return mb;
}

}  // namespace edgewise::gnn
