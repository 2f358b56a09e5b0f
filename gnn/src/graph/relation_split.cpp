// split_by_relation: one host pass over the CSR edges, one Graph per relation.
#include "edgewise/gnn/graph/relation_split.hpp"

#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

std::vector<Graph> split_by_relation(const Graph& graph, std::span<const int64_t> edge_type, int64_t num_relations) {
  EW_REQUIRE(num_relations >= 1, "split_by_relation: num_relations (", num_relations, ") must be positive");
  const int64_t num_edges = graph.num_edges();
  EW_REQUIRE(static_cast<int64_t>(edge_type.size()) == num_edges, "split_by_relation: edge_type.size() (",
             edge_type.size(), ") must equal the graph's edge count (", num_edges, ")");
  for (size_t e = 0; e < edge_type.size(); ++e) {
    EW_REQUIRE(edge_type[e] >= 0 && edge_type[e] < num_relations, "split_by_relation: edge_type[", e, "] (",
               edge_type[e], ") must lie in [0, num_relations = ", num_relations, ")");
  }
  auto [src, dst] = graph.coo();  // CSR order
  const std::vector<int64_t> input_position = graph.edge_ids().to_host_vector();
  std::vector<float> weight;
  if (graph.has_edge_weight()) weight = graph.edge_weight().to_host_vector();

  std::vector<std::vector<int64_t>> rel_src(static_cast<size_t>(num_relations));
  std::vector<std::vector<int64_t>> rel_dst(static_cast<size_t>(num_relations));
  std::vector<std::vector<float>> rel_weight(static_cast<size_t>(num_relations));
  for (int64_t k = 0; k < num_edges; ++k) {
    const auto r = static_cast<size_t>(edge_type[static_cast<size_t>(input_position[k])]);
    rel_src[r].push_back(src[k]);
    rel_dst[r].push_back(dst[k]);
    if (!weight.empty()) rel_weight[r].push_back(weight[k]);
  }
  std::vector<Graph> out;
  out.reserve(static_cast<size_t>(num_relations));
  for (int64_t r = 0; r < num_relations; ++r) {
    Graph g = Graph::from_coo(rel_src[r], rel_dst[r], graph.num_nodes(), rel_weight[r]);
    out.push_back(graph.device() == Device::cpu() ? g : g.to(graph.device()));
  }
  return out;
}

}  // namespace edgewise::gnn
