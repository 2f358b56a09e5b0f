// A hop-wise sample (HopSampler, PyG's layout) as the engine's blocks, so the C++
// minibatch models train on what BatchPipeline prepares.
#pragma once

#include "edgewise/gnn/sampling/hop_sampler.hpp"
#include "edgewise/gnn/sampling/neighbor_sampler.hpp"

namespace edgewise::gnn {

// Block l (outermost first, L = sample.num_sampled_edges.size() blocks) holds the
// edges into the nodes of hops 0..L-1-l, from the nodes of hops 0..L-l: PyG's
// trim_to_layer view. The sample's local ids (seeds, then each hop's new nodes)
// already put a block's destinations first among its sources, and its edges grouped
// by destination are a CSR prefix. Needs a sample of shared (not disjoint) subgraphs.
MiniBatch to_minibatch(const SampledSubgraph& sample, Device device);

}  // namespace edgewise::gnn
