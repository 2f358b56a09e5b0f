// HeteroGraph: a heterogeneous graph — named node types with node counts, and per
// relation (EdgeType{src_type, relation, dst_type}) the relation's edges as a Graph.
//
// Node ids are per type: an edge (u, v) of relation (s, r, d) joins node u of type s
// to node v of type d. Graph is square (one node set, no bipartite form), so each
// relation's Graph has max(num_src, num_dst) nodes and keeps the ids unchanged:
// source features are padded to that many rows and the destination rows are the first
// num_dst (hetero_aggregate.hpp does this). stacked_graph() offers the other layout a
// layer with a root term needs (sources first, then destinations).
// Every argument is validated before anything is stored: a rejected add_* call
// leaves the graph as it was. Copies share the relations' Graphs (immutable).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"

namespace edgewise::gnn {

// A relation: edges from nodes of src_type to nodes of dst_type (PyG's edge type
// triple). Ordered, so it can key maps.
struct EdgeType {
  std::string src_type;
  std::string relation;
  std::string dst_type;
  auto operator<=>(const EdgeType&) const = default;
};

// "src__relation__dst": PyG's key for an edge type in HeteroConv's ModuleDict.
std::string to_string(const EdgeType& edge_type);

class HeteroGraph {
 public:
  // Declares a node type holding `count` nodes (ids 0 .. count-1). Throws
  // std::invalid_argument on an empty or repeated name or a negative count.
  void add_node_type(const std::string& type, int64_t count);

  // Adds the relation's COO edges src[k] -> dst[k] (src ids of edge_type.src_type,
  // dst ids of edge_type.dst_type), with optional weights [E]; the Graph is built on
  // `device`. Throws std::invalid_argument naming the argument on an unknown node
  // type, an edge type already present, mismatched lengths, or an id out of range
  // for its type's count (naming the position and the count).
  void add_edge_type(const EdgeType& edge_type, const std::vector<int64_t>& src, const std::vector<int64_t>& dst,
                     const std::vector<float>& edge_weight = {}, Device device = Device::cpu());

  // Node types and edge types in the order they were added.
  std::vector<std::string> node_types() const;
  std::vector<EdgeType> edge_types() const;
  // The edge types whose dst_type is `dst_type`, in the order added (none: empty).
  // Throws on an unknown node type.
  std::vector<EdgeType> edge_types_into(const std::string& dst_type) const;

  bool has_node_type(const std::string& type) const;
  bool has_edge_type(const EdgeType& edge_type) const;
  // Throws std::invalid_argument naming the type when unknown.
  int64_t num_nodes(const std::string& type) const;
  // The relation's graph over max(num_src, num_dst) nodes, ids as given.
  const Graph& graph(const EdgeType& edge_type) const;
  // The relation over num_src + num_dst nodes: source u is node u, destination v is
  // node num_src + v. A homogeneous layer with a root term (SAGEConv, GINConv) run
  // on it with features [x_src; x_dst] gives, in rows num_src .. num_src+num_dst-1,
  // PyG's bipartite result for (x_src, x_dst). Built on first use, then kept.
  const Graph& stacked_graph(const EdgeType& edge_type) const;

 private:
  struct Relation {
    Graph graph;
    int64_t num_src = 0, num_dst = 0;
    // The stacked layout, built once on first use (copies of the HeteroGraph share it).
    struct Stacked {
      std::once_flag once;
      Graph graph;
    };
    std::shared_ptr<Stacked> stacked;
  };
  const Relation& relation(const EdgeType& edge_type, const char* caller) const;

  std::vector<std::pair<std::string, int64_t>> node_types_;  // in the order added
  std::vector<EdgeType> edge_types_;                         // in the order added
  std::map<EdgeType, Relation> relations_;
};

}  // namespace edgewise::gnn
