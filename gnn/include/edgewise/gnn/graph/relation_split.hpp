// Splitting a typed homogeneous graph into one Graph per relation (R-GCN's input:
// one node set, a relation id per edge), so a training loop splits once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// edge_type [E] gives each edge's relation in the input (COO) order the graph was
// built from (graph.edge_ids() maps CSR positions to it). Returns num_relations
// graphs over graph.num_nodes() nodes, on the graph's device; relation r holds the
// edges of type r (edge weights kept), in their CSR order. A relation without edges
// is an empty Graph of that many nodes. Throws std::invalid_argument naming
// edge_type when its length is not E or an entry lies outside [0, num_relations).
std::vector<Graph> split_by_relation(const Graph& graph, std::span<const int64_t> edge_type, int64_t num_relations);

}  // namespace edgewise::gnn
