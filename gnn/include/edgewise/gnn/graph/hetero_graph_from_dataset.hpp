// hetero_graph_from_dataset: the engine's HeteroGraph from a HeteroDataset (the
// generators' and readers' plain form), optionally with reverse relations.
#pragma once

#include "edgewise/gnn/data/hetero_dataset.hpp"
#include "edgewise/gnn/graph/hetero_graph.hpp"

namespace edgewise::gnn {

// The EdgeType (src_type, relation, dst_type) of an edge type's data.
EdgeType edge_type_of(const EdgeTypeData& edges);

// A HeteroGraph with data's node types (name, count) and edge types, in data's
// order, each relation's Graph built on `device`. add_reverse: right after each
// edge type between two different node types, also (dst_type, "rev_" + relation,
// src_type) with every edge turned round — PyG's ToUndirected naming and
// python/edgewise/torch/hetero.py's to_hetero_data(add_reverse=True), so every node
// type receives messages; a relation within one type (paper cites paper) gets none.
// Throws std::invalid_argument, as HeteroGraph::add_* do, on a repeated or unknown
// type or an id out of range.
HeteroGraph hetero_graph_from_dataset(const HeteroDataset& data, bool add_reverse = false,
                                      Device device = Device::cpu());

}  // namespace edgewise::gnn
