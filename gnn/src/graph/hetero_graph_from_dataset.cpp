// hetero_graph_from_dataset: node types, then each edge type and its reverse.
#include "edgewise/gnn/graph/hetero_graph_from_dataset.hpp"

namespace edgewise::gnn {

EdgeType edge_type_of(const EdgeTypeData& edges) { return {edges.src_type, edges.relation, edges.dst_type}; }

HeteroGraph hetero_graph_from_dataset(const HeteroDataset& data, bool add_reverse, Device device) {
  HeteroGraph g;
  for (const NodeTypeData& t : data.node_types) g.add_node_type(t.name, t.count);
  for (const EdgeTypeData& e : data.edge_types) {
    g.add_edge_type(edge_type_of(e), e.src, e.dst, {}, device);
    if (add_reverse && e.src_type != e.dst_type)
      g.add_edge_type({e.dst_type, "rev_" + e.relation, e.src_type}, e.dst, e.src, {}, device);
  }
  return g;
}

}  // namespace edgewise::gnn
