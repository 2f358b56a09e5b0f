// HeteroGraph: node types, per-relation Graphs, validation naming the argument.
#include "edgewise/gnn/graph/hetero_graph.hpp"

#include <algorithm>

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

std::string to_string(const EdgeType& edge_type) {
  return edge_type.src_type + "__" + edge_type.relation + "__" + edge_type.dst_type;
}

namespace {

std::string quoted(const EdgeType& t) { return "('" + t.src_type + "', '" + t.relation + "', '" + t.dst_type + "')"; }

// Ids of one side of a relation must address nodes of that side's type.
void check_ids(const std::vector<int64_t>& ids, const char* arg, const std::string& type, int64_t count,
               const EdgeType& edge_type) {
  for (size_t k = 0; k < ids.size(); ++k) {
    EW_REQUIRE(ids[k] >= 0 && ids[k] < count, "HeteroGraph::add_edge_type: ", arg, "[", k, "] (", ids[k],
               ") of edge type ", quoted(edge_type), " must lie in [0, ", count, ") (node type '", type, "' has ",
               count, " nodes)");
  }
}

}  // namespace

void HeteroGraph::add_node_type(const std::string& type, int64_t count) {
  EW_REQUIRE(!type.empty(), "HeteroGraph::add_node_type: type must not be empty");
  EW_REQUIRE(!has_node_type(type), "HeteroGraph::add_node_type: node type '", type, "' is already present");
  EW_REQUIRE(count >= 0, "HeteroGraph::add_node_type: count (", count, ") of node type '", type,
             "' must be non-negative");
  node_types_.emplace_back(type, count);
}

void HeteroGraph::add_edge_type(const EdgeType& edge_type, const std::vector<int64_t>& src,
                                const std::vector<int64_t>& dst, const std::vector<float>& edge_weight,
                                Device device) {
  EW_REQUIRE(!edge_type.relation.empty(), "HeteroGraph::add_edge_type: edge_type.relation must not be empty");
  EW_REQUIRE(has_node_type(edge_type.src_type), "HeteroGraph::add_edge_type: edge_type.src_type '",
             edge_type.src_type, "' of ", quoted(edge_type), " is not a node type");
  EW_REQUIRE(has_node_type(edge_type.dst_type), "HeteroGraph::add_edge_type: edge_type.dst_type '",
             edge_type.dst_type, "' of ", quoted(edge_type), " is not a node type");
  EW_REQUIRE(!has_edge_type(edge_type), "HeteroGraph::add_edge_type: edge type ", quoted(edge_type),
             " is already present");
  EW_REQUIRE(src.size() == dst.size(), "HeteroGraph::add_edge_type: src.size() (", src.size(),
             ") must equal dst.size() (", dst.size(), ") for ", quoted(edge_type));
  EW_REQUIRE(edge_weight.empty() || edge_weight.size() == src.size(), "HeteroGraph::add_edge_type: edge_weight.size() (",
             edge_weight.size(), ") must be 0 or the edge count (", src.size(), ") for ", quoted(edge_type));
  Relation r;
  r.num_src = num_nodes(edge_type.src_type);
  r.num_dst = num_nodes(edge_type.dst_type);
  check_ids(src, "src", edge_type.src_type, r.num_src, edge_type);
  check_ids(dst, "dst", edge_type.dst_type, r.num_dst, edge_type);
  // Graph validates the weights (finite) and builds on the host; then it moves.
  r.graph = Graph::from_coo(src, dst, std::max(r.num_src, r.num_dst), edge_weight);
  if (device != Device::cpu()) r.graph = r.graph.to(device);
  r.stacked = std::make_shared<Relation::Stacked>();
  relations_.emplace(edge_type, std::move(r));  // nothing was stored before this point
  edge_types_.push_back(edge_type);
}

std::vector<std::string> HeteroGraph::node_types() const {
  std::vector<std::string> out;
  for (const auto& [type, count] : node_types_) out.push_back(type);
  return out;
}

std::vector<EdgeType> HeteroGraph::edge_types() const { return edge_types_; }

std::vector<EdgeType> HeteroGraph::edge_types_into(const std::string& dst_type) const {
  EW_REQUIRE(has_node_type(dst_type), "HeteroGraph::edge_types_into: dst_type '", dst_type, "' is not a node type");
  std::vector<EdgeType> out;
  for (const EdgeType& t : edge_types_) {
    if (t.dst_type == dst_type) out.push_back(t);
  }
  return out;
}

bool HeteroGraph::has_node_type(const std::string& type) const {
  return std::any_of(node_types_.begin(), node_types_.end(), [&](const auto& p) { return p.first == type; });
}

bool HeteroGraph::has_edge_type(const EdgeType& edge_type) const { return relations_.count(edge_type) != 0; }

int64_t HeteroGraph::num_nodes(const std::string& type) const {
  for (const auto& [name, count] : node_types_) {
    if (name == type) return count;
  }
  EW_REQUIRE(false, "HeteroGraph::num_nodes: type '", type, "' is not a node type");
  return 0;
}

const HeteroGraph::Relation& HeteroGraph::relation(const EdgeType& edge_type, const char* caller) const {
  auto it = relations_.find(edge_type);
  EW_REQUIRE(it != relations_.end(), "HeteroGraph::", caller, ": edge_type ", quoted(edge_type),
             " is not an edge type of this graph");
  return it->second;
}

const Graph& HeteroGraph::graph(const EdgeType& edge_type) const { return relation(edge_type, "graph").graph; }

const Graph& HeteroGraph::stacked_graph(const EdgeType& edge_type) const {
  const Relation& r = relation(edge_type, "stacked_graph");
  std::call_once(r.stacked->once, [&] {
    // coo() lists the edges in CSR order, which edge_weight() follows too.
    auto [src, dst] = r.graph.coo();
    for (int64_t& v : dst) v += r.num_src;
    std::vector<float> weight;
    if (r.graph.has_edge_weight()) weight = r.graph.edge_weight().to_host_vector();
    Graph g = Graph::from_coo(src, dst, r.num_src + r.num_dst, weight);
    r.stacked->graph = r.graph.device() == Device::cpu() ? g : g.to(r.graph.device());
  });
  return r.stacked->graph;
}

}  // namespace edgewise::gnn
