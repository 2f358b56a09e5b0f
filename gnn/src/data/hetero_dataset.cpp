// HeteroDataset: lookups of node and edge types by name.
#include "edgewise/gnn/data/hetero_dataset.hpp"

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

const NodeTypeData& HeteroDataset::node_type(const std::string& type) const {
  for (const NodeTypeData& t : node_types) {
    if (t.name == type) return t;
  }
  ::edgewise::detail::throw_invalid_argument("HeteroDataset::node_type: '", type, "' is not a node type");
}

const EdgeTypeData& HeteroDataset::edge_type(const std::string& src_type, const std::string& relation,
                                             const std::string& dst_type) const {
  for (const EdgeTypeData& t : edge_types) {
    if (t.src_type == src_type && t.relation == relation && t.dst_type == dst_type) return t;
  }
  ::edgewise::detail::throw_invalid_argument("HeteroDataset::edge_type: ('", src_type, "', '", relation, "', '",
                                             dst_type, "') is not an edge type");
}

}  // namespace edgewise::gnn
