// GraphDataset: validation, one-hot degree features and stratified folds.
#include "edgewise/gnn/data/graph_dataset.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <system_error>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

void GraphDataset::validate() const {
  const std::string where = "graph dataset '" + name + "': ";
  const int64_t g_count = num_graphs();
  EW_REQUIRE(static_cast<int64_t>(node_offsets.size()) == g_count + 1 &&
                 static_cast<int64_t>(edge_offsets.size()) == g_count + 1,
             where, "node_offsets (", node_offsets.size(), ") and edge_offsets (", edge_offsets.size(),
             ") must have one entry per graph plus one (", g_count + 1, ")");
  EW_REQUIRE(node_offsets[0] == 0 && edge_offsets[0] == 0, where, "offsets must start at 0");
  EW_REQUIRE(src.size() == dst.size() && static_cast<int64_t>(src.size()) == edge_offsets.back(), where, "src (",
             src.size(), ") and dst (", dst.size(), ") must both hold edge_offsets[G] (", edge_offsets.back(),
             ") edges");
  EW_REQUIRE(num_classes >= 0, where, "num_classes (", num_classes, ") must be >= 0");
  for (int64_t g = 0; g < g_count; ++g) {
    const int64_t n = node_offsets[g + 1] - node_offsets[g];
    EW_REQUIRE(n >= 0 && edge_offsets[g + 1] >= edge_offsets[g], where, "graph ", g,
               ": offsets must be nondecreasing");
    for (int64_t e = edge_offsets[g]; e < edge_offsets[g + 1]; ++e) {
      EW_REQUIRE(src[e] >= 0 && src[e] < n && dst[e] >= 0 && dst[e] < n, where, "graph ", g, " edge ",
                 e - edge_offsets[g], " (", src[e], " -> ", dst[e], ") leaves the graph's ", n, " nodes");
    }
    EW_REQUIRE(labels[g] >= 0 && labels[g] < num_classes, where, "graph ", g, " label ", labels[g],
               " is outside [0, ", num_classes, ")");
  }
  EW_REQUIRE(num_features >= 0 && static_cast<int64_t>(features.size()) == total_nodes() * num_features, where,
             "features hold ", features.size(), " values for ", total_nodes(), " nodes x ", num_features,
             " features");
  for (size_t i = 0; i < features.size(); ++i)
    EW_REQUIRE(std::isfinite(features[i]), where, "feature [", i / static_cast<size_t>(num_features), ", ",
               i % static_cast<size_t>(num_features), "] is not finite (", features[i], ")");
  EW_REQUIRE(folds.empty() || static_cast<int64_t>(folds.size()) == g_count, where, "folds has ", folds.size(),
             " entries for ", g_count, " graphs");
  for (size_t g = 0; g < folds.size(); ++g)
    EW_REQUIRE(folds[g] >= 0, where, "graph ", g, " fold ", folds[g], " must be >= 0");
}

void add_one_hot_degree_features(GraphDataset& d, int64_t max_degree) {
  std::vector<int64_t> degree(static_cast<size_t>(d.total_nodes()), 0);
  for (int64_t g = 0; g < d.num_graphs(); ++g) {
    for (int64_t e = d.edge_offsets[g]; e < d.edge_offsets[g + 1]; ++e) ++degree[d.node_offsets[g] + d.dst[e]];
  }
  int64_t cap = max_degree;
  if (cap < 0) {
    cap = 0;
    for (int64_t k : degree) cap = std::max(cap, k);
    cap = std::min<int64_t>(cap, 127);
  }
  d.num_features = cap + 1;
  d.features.assign(static_cast<size_t>(d.total_nodes() * d.num_features), 0.0f);
  for (size_t i = 0; i < degree.size(); ++i)
    d.features[i * static_cast<size_t>(d.num_features) + static_cast<size_t>(std::min(degree[i], cap))] = 1.0f;
  d.note += (d.note.empty() ? "" : "; ") + std::string("node features: one-hot in-degree, capped at ") +
            std::to_string(cap) + " (" + std::to_string(d.num_features) + " columns)";
}

std::vector<int64_t> stratified_folds(const std::vector<int64_t>& labels, int64_t k, uint64_t seed) {
  EW_REQUIRE(k >= 2, "stratified_folds: k (", k, ") must be >= 2");
  std::map<int64_t, std::vector<int64_t>> by_class;
  for (size_t g = 0; g < labels.size(); ++g) by_class[labels[g]].push_back(static_cast<int64_t>(g));
  std::vector<int64_t> folds(labels.size(), 0);
  CounterRng rng(seed, kSaltGraphFolds, 0);
  int64_t next = 0;  // continue dealing across classes so fold sizes stay balanced
  for (auto& [label, ids] : by_class) {
    shuffle(ids, rng);
    for (int64_t g : ids) folds[static_cast<size_t>(g)] = next++ % k;
  }
  return folds;
}

}  // namespace edgewise::gnn
