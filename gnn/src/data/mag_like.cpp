// mag_like_graph: ogbn-mag-shaped node and edge types, planted communities,
// centroid-plus-noise features, 70 / 10 / 20 paper split.
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "data/community_links.hpp"
#include "data/parallel.hpp"
#include "data/random_draws.hpp"
#include "edgewise/gnn/data/synthetic_hetero.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "mag_like_graph";

// Node types in output order; the index is also the stream tag of their nodes.
enum NodeTypeIndex : int { kPaper, kAuthor, kInstitution, kFieldOfStudy, kNumNodeTypes };
constexpr std::array<const char*, kNumNodeTypes> kNodeTypeNames = {"paper", "author", "institution", "field_of_study"};
// ogbn-mag's nodes per paper (the paper entry unused).
constexpr std::array<double, kNumNodeTypes> kNodesPerPaper = {1.0, 1.54, 0.012, 0.082};

// One edge type of ogbn-mag: its types, mean out-degree and in-degree skew.
struct EdgeShape {
  NodeTypeIndex src;
  const char* relation;
  NodeTypeIndex dst;
  double mean_degree;
  double skew;
};

// ogbn-mag's mean degrees: 7.3 citations, 9.7 author links and 10.2 field links per
// paper, 0.94 affiliations per author. Authors are fewer than author links, so each
// author writes 9.7 * papers / authors papers.
std::array<EdgeShape, 4> edge_shapes(int64_t papers, int64_t authors) {
  const double writes_per_author = 9.7 * static_cast<double>(papers) / static_cast<double>(authors);
  return {{{kPaper, "cites", kPaper, 7.3, 2.0},
           {kAuthor, "writes", kPaper, writes_per_author, 1.5},
           {kAuthor, "affiliated_with", kInstitution, 0.94, 2.5},
           {kPaper, "has_topic", kFieldOfStudy, 10.2, 3.0}}};
}

void check_params(const MagLikeParams& p, int64_t classes) {
  EW_REQUIRE(p.papers >= 1 && p.papers <= (int64_t{1} << 32), kOp, ": papers (", p.papers, ") must lie in [1, 2^32]");
  EW_REQUIRE(classes >= 2 && classes < (int64_t{1} << 31), kOp, ": classes (", classes, ") must lie in [2, 2^31)");
  EW_REQUIRE(p.features >= 1 && p.features < (int64_t{1} << 31), kOp, ": features (", p.features,
             ") must lie in [1, 2^31)");
  EW_REQUIRE(p.homophily >= 0 && p.homophily <= 1, kOp, ": homophily (", p.homophily, ") must lie in [0, 1]");
  EW_REQUIRE(p.feature_noise >= 0 && std::isfinite(p.feature_noise), kOp, ": feature_noise (", p.feature_noise,
             ") must be finite and >= 0");
  // The largest type (authors, about 1.54 * papers) times the width must stay far
  // from int64's range.
  EW_REQUIRE(p.papers * 2 <= (int64_t{1} << 62) / p.features, kOp, ": papers (", p.papers, ") * features (", p.features,
             ") is too large a feature matrix");
}

// max(1, round(papers * r)), half to even like Python's round (and np.rint).
int64_t node_count(int64_t papers, double per_paper) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::nearbyint(static_cast<double>(papers) * per_paper)));
}

// community[v] in [0, classes), uniform, per node.
std::vector<int64_t> draw_communities(NodeTypeIndex type, int64_t count, int64_t classes, uint64_t seed) {
  std::vector<int64_t> community(static_cast<size_t>(count));
#pragma omp parallel for schedule(static) if (count >= kMinParallelWork / 4)
  for (int64_t v = 0; v < count; ++v) {
    CounterRng rng(seed, kSaltCommunity, typed_stream_id(type, v));
    community[static_cast<size_t>(v)] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(classes)));
  }
  return community;
}

// [classes, F] standard normal, one stream per community.
std::vector<float> draw_centroids(int64_t classes, int64_t F, uint64_t seed) {
  std::vector<float> centroids(static_cast<size_t>(classes * F));
  for (int64_t c = 0; c < classes; ++c) {
    CounterRng rng(seed, kSaltCentroids, static_cast<uint64_t>(c));
    fill_standard_normal(rng, centroids.data() + c * F, F);
  }
  return centroids;
}

// Row v: its community's centroid plus noise * N(0, 1), from node v's own stream.
std::vector<float> draw_features(NodeTypeIndex type, const std::vector<int64_t>& community,
                                 const std::vector<float>& centroids, int64_t F, double noise, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(community.size());
  std::vector<float> x(static_cast<size_t>(n * F));
  const float scale = static_cast<float>(noise);
#pragma omp parallel for schedule(static) if (n * F >= kMinParallelWork)
  for (int64_t v = 0; v < n; ++v) {
    float* row = x.data() + v * F;
    CounterRng rng(seed, kSaltFeatures, typed_stream_id(type, v));
    fill_standard_normal(rng, row, F);
    const float* centroid = centroids.data() + community[static_cast<size_t>(v)] * F;
    for (int64_t j = 0; j < F; ++j) row[j] = row[j] * scale + centroid[j];
  }
  return x;
}

// Papers in a seeded random order (by a per-paper key, ties by id), cut at 70 % and
// 80 %; each part sorted.
void split_papers(int64_t papers, uint64_t seed, HeteroDataset& d) {
  std::vector<uint64_t> key(static_cast<size_t>(papers));
  for (int64_t v = 0; v < papers; ++v)
    key[static_cast<size_t>(v)] = CounterRng(seed, kSaltSplit, typed_stream_id(kPaper, v)).next();
  std::vector<int64_t> order(static_cast<size_t>(papers));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const uint64_t ka = key[static_cast<size_t>(a)], kb = key[static_cast<size_t>(b)];
    return ka != kb ? ka < kb : a < b;
  });
  // Python's int(0.7 * papers): the same double, truncated.
  const auto train_end = static_cast<int64_t>(0.7 * static_cast<double>(papers));
  const auto valid_end = static_cast<int64_t>(0.8 * static_cast<double>(papers));
  d.train_idx.assign(order.begin(), order.begin() + train_end);
  d.valid_idx.assign(order.begin() + train_end, order.begin() + valid_end);
  d.test_idx.assign(order.begin() + valid_end, order.end());
  for (auto* part : {&d.train_idx, &d.valid_idx, &d.test_idx}) std::sort(part->begin(), part->end());
}

}  // namespace

int64_t mag_like_default_classes(int64_t papers) { return std::min<int64_t>(349, std::max<int64_t>(8, papers / 2000)); }

HeteroDataset mag_like_graph(const MagLikeParams& p, uint64_t seed) {
  const int64_t classes = p.classes.value_or(mag_like_default_classes(p.papers));
  check_params(p, classes);
  HeteroDataset d;
  d.name = "mag_like";
  d.target_type = kNodeTypeNames[kPaper];
  d.num_classes = classes;

  std::array<std::vector<int64_t>, kNumNodeTypes> community;
  const std::vector<float> centroids = draw_centroids(classes, p.features, seed);
  for (int t = 0; t < kNumNodeTypes; ++t) {
    const auto type = static_cast<NodeTypeIndex>(t);
    const int64_t count = type == kPaper ? p.papers : node_count(p.papers, kNodesPerPaper[t]);
    community[t] = draw_communities(type, count, classes, seed);
    d.node_types.push_back(
        {.name = kNodeTypeNames[t],
         .count = count,
         .num_features = p.features,
         .features = draw_features(type, community[t], centroids, p.features, p.feature_noise, seed)});
  }
  d.labels = community[kPaper];

  const auto shapes = edge_shapes(p.papers, d.node_types[kAuthor].count);
  for (size_t r = 0; r < shapes.size(); ++r) {
    const EdgeShape& s = shapes[r];
    EdgeTypeData& edges = d.edge_types.emplace_back();
    edges.src_type = kNodeTypeNames[s.src];
    edges.relation = s.relation;
    edges.dst_type = kNodeTypeNames[s.dst];
    community_links(community[s.src], community[s.dst], classes,
                    {.mean_degree = s.mean_degree, .homophily = p.homophily, .skew = s.skew}, seed, r, edges.src,
                    edges.dst);
  }
  split_papers(p.papers, seed, d);
  return d;
}

}  // namespace edgewise::gnn
