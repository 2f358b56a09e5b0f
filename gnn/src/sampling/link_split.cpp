// random_link_split: PyG's RandomLinkSplit (add_negative_train_samples=False,
// neg_sampling_ratio=1) over the distinct links of an edge list.
#include <algorithm>
#include <cmath>

#include "edgewise/gnn/sampling/link_split.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "random_link_split";

// The graph of `pairs`, with both directions when `both_directions`.
Graph graph_of(const std::vector<const NodePairs*>& parts, int64_t num_nodes, bool both_directions) {
  std::vector<int64_t> src, dst;
  for (const NodePairs* p : parts) {
    src.insert(src.end(), p->src.begin(), p->src.end());
    dst.insert(dst.end(), p->dst.begin(), p->dst.end());
    if (both_directions) {
      src.insert(src.end(), p->dst.begin(), p->dst.end());
      dst.insert(dst.end(), p->src.begin(), p->src.end());
    }
  }
  return Graph::from_coo(src, dst, num_nodes);
}

NodePairs slice(const NodePairs& p, int64_t begin, int64_t end) {
  return {{p.src.begin() + begin, p.src.begin() + end}, {p.dst.begin() + begin, p.dst.begin() + end}};
}

}  // namespace

LinkSplit random_link_split(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes,
                            const LinkSplitOptions& options) {
  EW_REQUIRE(num_nodes >= 0 && num_nodes < (int64_t{1} << 31), kOp, ": num_nodes (", num_nodes,
             ") must lie in [0, 2^31)");
  EW_REQUIRE(src.size() == dst.size(), kOp, ": src has ", src.size(), " ids but dst has ", dst.size());
  EW_REQUIRE(options.num_val >= 0 && options.num_val < 1, kOp, ": num_val (", options.num_val,
             ") must lie in [0, 1)");
  EW_REQUIRE(options.num_test >= 0 && options.num_test < 1, kOp, ": num_test (", options.num_test,
             ") must lie in [0, 1)");
  EW_REQUIRE(options.num_val + options.num_test < 1, kOp, ": num_val + num_test (",
             options.num_val + options.num_test, ") must be < 1");
  // Links as keys u * N + v (undirected: u < v), distinct, self loops left out.
  const auto N = num_nodes;
  std::vector<int64_t> keys;
  keys.reserve(src.size());
  for (size_t e = 0; e < src.size(); ++e) {
    EW_REQUIRE(src[e] >= 0 && src[e] < N, kOp, ": src[", e, "] (", src[e], ") must lie in [0, ", N, ")");
    EW_REQUIRE(dst[e] >= 0 && dst[e] < N, kOp, ": dst[", e, "] (", dst[e], ") must lie in [0, ", N, ")");
    if (src[e] == dst[e]) continue;
    const int64_t u = options.is_undirected ? std::min(src[e], dst[e]) : src[e];
    const int64_t v = options.is_undirected ? std::max(src[e], dst[e]) : dst[e];
    keys.push_back(u * N + v);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const auto L = static_cast<int64_t>(keys.size());
  // Seeded Fisher-Yates shuffle (the sorted order makes it independent of the input order).
  CounterRng rng(options.seed, kSaltLinkShuffle, 0);
  for (int64_t i = L - 1; i > 0; --i) {
    std::swap(keys[static_cast<size_t>(i)], keys[rng.below(static_cast<uint64_t>(i + 1))]);
  }
  // PyG: int(fraction * L) links each for validation and test, the rest for training.
  const auto num_val = static_cast<int64_t>(std::floor(options.num_val * static_cast<double>(L)));
  const auto num_test = static_cast<int64_t>(std::floor(options.num_test * static_cast<double>(L)));
  const int64_t num_train = L - num_val - num_test;
  EW_REQUIRE(num_train >= 1, kOp, ": ", L, " distinct link(s) leave no training link (num_val ", options.num_val,
             ", num_test ", options.num_test, ")");

  NodePairs all;
  all.src.reserve(keys.size());
  all.dst.reserve(keys.size());
  for (int64_t key : keys) {
    all.src.push_back(key / N);
    all.dst.push_back(key % N);
  }
  LinkSplit split;
  split.num_nodes = N;
  split.train_pos = slice(all, 0, num_train);
  split.valid_pos = slice(all, num_train, num_train + num_val);
  split.test_pos = slice(all, num_train + num_val, L);
  split.train_graph = graph_of({&split.train_pos}, N, options.is_undirected);
  split.test_graph = graph_of({&split.train_pos, &split.valid_pos}, N, options.is_undirected);
  // Negatives for validation and test are non-edges of the whole input (PyG samples
  // them once against all edges); a link's reverse direction counts as an edge when
  // the links are undirected.
  const Graph full = graph_of({&all}, N, options.is_undirected);
  const NodePairs negatives =
      sample_negative_edges(full, num_val + num_test, stream_key(options.seed, kSaltSplitNegatives, 0));
  split.valid_neg = slice(negatives, 0, num_val);
  split.test_neg = slice(negatives, num_val, num_val + num_test);
  return split;
}

}  // namespace edgewise::gnn
