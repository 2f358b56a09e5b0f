// HeteroDataset: a heterogeneous graph in host memory — typed nodes with features,
// labels and a split on one node type, typed edges as COO. The C++ form of the dict
// of python/edgewise/hetero.py (and of PyG's HeteroData); the engine's HeteroGraph is
// built from it by graph/hetero_graph_from_dataset.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace edgewise::gnn {

// One node type: `count` nodes with ids 0 .. count-1.
// features  [count, num_features] row-major (empty with num_features 0).
struct NodeTypeData {
  std::string name;
  int64_t count = 0;
  int64_t num_features = 0;
  std::vector<float> features;
};

// One edge type, PyG's (src_type, relation, dst_type) triple: edge k joins node
// src[k] of src_type to node dst[k] of dst_type (ids per type). src and dst: [E].
struct EdgeTypeData {
  std::string src_type;
  std::string relation;
  std::string dst_type;
  std::vector<int64_t> src;
  std::vector<int64_t> dst;

  int64_t num_edges() const { return static_cast<int64_t>(src.size()); }
};

// Node types and edge types in a fixed order (the order HeteroGraph receives them).
// One node type, target_type, is labelled:
// labels     [count of target_type], class ids in [0, num_classes);
// train_idx, valid_idx, test_idx: ids of target_type, strictly ascending, pairwise
//            disjoint.
struct HeteroDataset {
  std::string name;
  std::vector<NodeTypeData> node_types;
  std::vector<EdgeTypeData> edge_types;
  std::string target_type;
  int64_t num_classes = 0;
  std::vector<int64_t> labels;
  std::vector<int64_t> train_idx, valid_idx, test_idx;

  // Lookups by name; std::invalid_argument naming the type when there is none.
  const NodeTypeData& node_type(const std::string& type) const;
  const EdgeTypeData& edge_type(const std::string& src_type, const std::string& relation,
                                const std::string& dst_type) const;
};

}  // namespace edgewise::gnn
