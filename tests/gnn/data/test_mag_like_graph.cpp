// Tests of mag_like_graph: ogbn-mag's node proportions and mean degrees, skewed
// in-degrees, the homophily rate on every edge type, centroid-plus-noise features,
// the 70 / 10 / 20 split, ids in range, determinism across seeds and thread counts,
// and every bad parameter named. Communities of non-paper nodes are not returned:
// with feature_noise 0 a node's features are its community's centroid, which the
// papers' labels name, so the tests recover them from there.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "edgewise/gnn/data/synthetic_hetero.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::EdgeTypeData;
using gnn::HeteroDataset;
using gnn::MagLikeParams;
using gnn::NodeTypeData;

// Large enough for means within a percent, crosses every parallel threshold;
// narrow, noise-free features so communities can be read back (file comment).
const HeteroDataset& mag20k() {
  static const HeteroDataset d =
      gnn::mag_like_graph({.papers = 20'000, .features = 4, .feature_noise = 0}, test_seed());
  return d;
}

std::vector<float> feature_row(const NodeTypeData& t, int64_t v) {
  const auto begin = t.features.begin() + v * t.num_features;
  return {begin, begin + t.num_features};
}

// Each node's community, from noise-free features: the label of the papers whose
// row is the same centroid (-1 for a community without papers).
std::map<std::string, std::vector<int64_t>> communities_from_features(const HeteroDataset& d) {
  std::map<std::vector<float>, int64_t> community_of_centroid;
  const NodeTypeData& papers = d.node_type("paper");
  for (int64_t v = 0; v < papers.count; ++v)
    community_of_centroid.emplace(feature_row(papers, v), d.labels[static_cast<size_t>(v)]);
  std::map<std::string, std::vector<int64_t>> community;
  for (const NodeTypeData& t : d.node_types) {
    auto& c = community[t.name];
    for (int64_t v = 0; v < t.count; ++v) {
      const auto it = community_of_centroid.find(feature_row(t, v));
      c.push_back(it == community_of_centroid.end() ? -1 : it->second);
    }
  }
  return community;
}

std::vector<int64_t> in_degrees(const EdgeTypeData& e, int64_t num_dst) {
  std::vector<int64_t> degree(static_cast<size_t>(num_dst), 0);
  for (int64_t v : e.dst) ++degree[static_cast<size_t>(v)];
  return degree;
}

void expect_same(const HeteroDataset& a, const HeteroDataset& b) {
  ASSERT_EQ(a.node_types.size(), b.node_types.size());
  for (size_t t = 0; t < a.node_types.size(); ++t) {
    EXPECT_EQ(a.node_types[t].count, b.node_types[t].count);
    EXPECT_EQ(a.node_types[t].features, b.node_types[t].features) << a.node_types[t].name;
  }
  ASSERT_EQ(a.edge_types.size(), b.edge_types.size());
  for (size_t r = 0; r < a.edge_types.size(); ++r) {
    EXPECT_EQ(a.edge_types[r].src, b.edge_types[r].src) << a.edge_types[r].relation;
    EXPECT_EQ(a.edge_types[r].dst, b.edge_types[r].dst) << a.edge_types[r].relation;
  }
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.train_idx, b.train_idx);
  EXPECT_EQ(a.valid_idx, b.valid_idx);
  EXPECT_EQ(a.test_idx, b.test_idx);
}

TEST(MagLikeGraph, NodeTypesComeInOgbnMagProportions) {
  const HeteroDataset& d = mag20k();
  ASSERT_EQ(d.node_types.size(), 4u);
  const std::vector<std::string> names = {"paper", "author", "institution", "field_of_study"};
  const std::vector<int64_t> counts = {20'000, 30'800, 240, 1'640};  // 1, 1.54, 0.012, 0.082 per paper
  for (size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(d.node_types[t].name, names[t]);
    EXPECT_EQ(d.node_types[t].count, counts[t]) << names[t];
  }
  EXPECT_EQ(d.target_type, "paper");
  EXPECT_EQ(d.name, "mag_like");
  // Python's max(1, round(papers * r)), half to even: 38.5 -> 38, 192.5 -> 192, 1.5 -> 2.
  const std::map<int64_t, std::vector<int64_t>> python = {
      {1, {1, 2, 1, 1}}, {7, {7, 11, 1, 1}}, {25, {25, 38, 1, 2}}, {125, {125, 192, 2, 10}}};
  for (const auto& [papers, expected] : python) {
    const HeteroDataset small = gnn::mag_like_graph({.papers = papers, .features = 1});
    std::vector<int64_t> got;
    for (const NodeTypeData& t : small.node_types) got.push_back(t.count);
    EXPECT_EQ(got, expected) << papers << " papers";
  }
}

TEST(MagLikeGraph, EdgeTypesHaveOgbnMagMeanOutDegrees) {
  const HeteroDataset& d = mag20k();
  const std::vector<std::vector<std::string>> types = {{"paper", "cites", "paper"},
                                                       {"author", "writes", "paper"},
                                                       {"author", "affiliated_with", "institution"},
                                                       {"paper", "has_topic", "field_of_study"}};
  ASSERT_EQ(d.edge_types.size(), types.size());
  for (size_t r = 0; r < types.size(); ++r) {
    EXPECT_EQ(d.edge_types[r].src_type, types[r][0]);
    EXPECT_EQ(d.edge_types[r].relation, types[r][1]);
    EXPECT_EQ(d.edge_types[r].dst_type, types[r][2]);
  }
  // Per source: 7.3 citations per paper, 9.7 author links per paper spread over the
  // authors, 0.94 affiliations per author, 10.2 topics per paper.
  const std::map<std::string, double> per_source = {
      {"cites", 7.3}, {"writes", 9.7 * 20'000 / 30'800.0}, {"affiliated_with", 0.94}, {"has_topic", 10.2}};
  for (const EdgeTypeData& e : d.edge_types) {
    const double mean = static_cast<double>(e.num_edges()) / static_cast<double>(d.node_type(e.src_type).count);
    EXPECT_NEAR(mean, per_source.at(e.relation), 0.03 * per_source.at(e.relation)) << e.relation;
    EXPECT_EQ(e.src.size(), e.dst.size());
    EXPECT_TRUE(std::is_sorted(e.src.begin(), e.src.end())) << e.relation << ": listed by source";
  }
  EXPECT_NEAR(static_cast<double>(d.edge_type("author", "writes", "paper").num_edges()) / 20'000, 9.7, 0.2);
}

TEST(MagLikeGraph, InDegreesAreSkewed) {
  const HeteroDataset& d = mag20k();
  for (const EdgeTypeData& e : d.edge_types) {
    const std::vector<int64_t> degree = in_degrees(e, d.node_type(e.dst_type).count);
    const double mean = static_cast<double>(e.num_edges()) / static_cast<double>(degree.size());
    const int64_t max = *std::max_element(degree.begin(), degree.end());
    // A uniform pick would put the maximum within a few standard deviations of the mean.
    EXPECT_GT(static_cast<double>(max), 8 * mean) << e.relation;
    // Power law: the busiest 1 % of destinations take far more than 1 % of the edges.
    std::vector<int64_t> sorted = degree;
    std::sort(sorted.rbegin(), sorted.rend());
    const size_t top = std::max<size_t>(1, sorted.size() / 100);
    int64_t top_edges = 0;
    for (size_t i = 0; i < top; ++i) top_edges += sorted[i];
    EXPECT_GT(static_cast<double>(top_edges), 0.03 * static_cast<double>(e.num_edges())) << e.relation;
  }
}

// The fraction of edges inside the source's community: homophily, plus the
// share of the rest that lands there by chance, 1 / classes.
TEST(MagLikeGraph, EdgesStayInTheSourceCommunityAtTheHomophilyRate) {
  const HeteroDataset& d = mag20k();
  const auto community = communities_from_features(d);
  const double h = MagLikeParams{}.homophily, K = static_cast<double>(d.num_classes);
  EXPECT_EQ(d.num_classes, 10);
  for (const EdgeTypeData& e : d.edge_types) {
    const auto& cs = community.at(e.src_type);
    const auto& cd = community.at(e.dst_type);
    int64_t inside = 0;
    for (int64_t k = 0; k < e.num_edges(); ++k) {
      const int64_t a = cs[static_cast<size_t>(e.src[static_cast<size_t>(k)])];
      ASSERT_GE(a, 0) << "every community has papers at 20,000 papers";
      inside += a == cd[static_cast<size_t>(e.dst[static_cast<size_t>(k)])];
    }
    EXPECT_NEAR(static_cast<double>(inside) / static_cast<double>(e.num_edges()), h + (1 - h) / K, 0.02) << e.relation;
  }
}

// homophily 1: every destination is in the source's community unless that
// community has no node of the destination type (then it is drawn anywhere).
TEST(MagLikeGraph, FullHomophilyKeepsEveryEdgeInsideWhereItCan) {
  const HeteroDataset d =
      gnn::mag_like_graph({.papers = 2'000, .features = 2, .homophily = 1, .feature_noise = 0}, test_seed() + 1);
  const auto community = communities_from_features(d);
  for (const EdgeTypeData& e : d.edge_types) {
    const auto& cs = community.at(e.src_type);
    const auto& cd = community.at(e.dst_type);
    std::vector<bool> has_members(static_cast<size_t>(d.num_classes), false);
    for (int64_t c : cd) {
      if (c >= 0) has_members[static_cast<size_t>(c)] = true;
    }
    for (int64_t k = 0; k < e.num_edges(); ++k) {
      const int64_t a = cs[static_cast<size_t>(e.src[static_cast<size_t>(k)])];
      if (a < 0 || !has_members[static_cast<size_t>(a)]) continue;  // nothing to stay inside
      ASSERT_EQ(cd[static_cast<size_t>(e.dst[static_cast<size_t>(k)])], a) << e.relation << " edge " << k;
    }
  }
}

TEST(MagLikeGraph, NoiseFreeFeaturesAreOneCentroidPerCommunity) {
  const HeteroDataset& d = mag20k();
  const auto community = communities_from_features(d);
  for (const NodeTypeData& t : d.node_types) {
    EXPECT_EQ(t.num_features, 4);
    ASSERT_EQ(t.features.size(), static_cast<size_t>(t.count * 4)) << t.name;
    const auto& c = community.at(t.name);
    EXPECT_EQ(std::count(c.begin(), c.end(), int64_t{-1}), 0) << t.name << ": a row that is no paper centroid";
  }
  // Communities are uniform: each label about papers / classes times.
  std::vector<int64_t> per_class(static_cast<size_t>(d.num_classes), 0);
  for (int64_t y : d.labels) ++per_class[static_cast<size_t>(y)];
  for (int64_t n : per_class) EXPECT_NEAR(static_cast<double>(n), 2'000, 200);
}

TEST(MagLikeGraph, FeaturesAreCloserToTheirOwnCommunityCentroid) {
  const int64_t F = 32;
  const double noise = MagLikeParams{}.feature_noise;
  const HeteroDataset d = gnn::mag_like_graph({.papers = 4'000, .features = F}, test_seed() + 2);
  const NodeTypeData& papers = d.node_type("paper");
  const int64_t K = d.num_classes;
  ASSERT_EQ(K, 8);
  // Empirical centroids: the mean paper of each class.
  std::vector<double> mean(static_cast<size_t>(K * F), 0.0);
  std::vector<int64_t> size(static_cast<size_t>(K), 0);
  for (int64_t v = 0; v < papers.count; ++v) {
    const int64_t y = d.labels[static_cast<size_t>(v)];
    ++size[static_cast<size_t>(y)];
    for (int64_t j = 0; j < F; ++j)
      mean[static_cast<size_t>(y * F + j)] += papers.features[static_cast<size_t>(v * F + j)];
  }
  for (int64_t i = 0; i < K * F; ++i)
    mean[static_cast<size_t>(i)] /= static_cast<double>(size[static_cast<size_t>(i / F)]);
  // Per paper: the squared distance to its own class's mean, and the average one
  // to the other classes' means.
  double own = 0, other = 0;
  for (int64_t v = 0; v < papers.count; ++v) {
    const int64_t y = d.labels[static_cast<size_t>(v)];
    for (int64_t c = 0; c < K; ++c) {
      double d2 = 0;
      for (int64_t j = 0; j < F; ++j) {
        const double diff = papers.features[static_cast<size_t>(v * F + j)] - mean[static_cast<size_t>(c * F + j)];
        d2 += diff * diff;
      }
      if (c == y)
        own += d2;
      else
        other += d2 / static_cast<double>(K - 1);
    }
  }
  own /= static_cast<double>(papers.count);
  other /= static_cast<double>(papers.count);
  // Own: noise^2 per feature. Another: plus the squared distance of two standard
  // normal centroids, 2 per feature.
  EXPECT_NEAR(own / static_cast<double>(F), noise * noise, 0.05 * noise * noise);
  EXPECT_GT(other - own, 1.0 * static_cast<double>(F));
  EXPECT_LT(other - own, 3.0 * static_cast<double>(F));
  for (const NodeTypeData& t : d.node_types) {
    ASSERT_EQ(t.features.size(), static_cast<size_t>(t.count * F)) << t.name;
    EXPECT_TRUE(std::all_of(t.features.begin(), t.features.end(), [](float x) { return std::isfinite(x); }));
  }
}

TEST(MagLikeGraph, SplitIsSeventyTenTwentyDisjointAndSorted) {
  const auto check = [](const HeteroDataset& d, int64_t papers, size_t train, size_t valid, size_t test) {
    EXPECT_EQ(d.train_idx.size(), train);
    EXPECT_EQ(d.valid_idx.size(), valid);
    EXPECT_EQ(d.test_idx.size(), test);
    std::vector<int64_t> all;
    for (const auto* part : {&d.train_idx, &d.valid_idx, &d.test_idx}) {
      EXPECT_TRUE(std::adjacent_find(part->begin(), part->end(), std::greater_equal<>()) == part->end())
          << "strictly ascending";
      all.insert(all.end(), part->begin(), part->end());
    }
    std::sort(all.begin(), all.end());
    std::vector<int64_t> every(static_cast<size_t>(papers));
    std::iota(every.begin(), every.end(), 0);
    EXPECT_EQ(all, every) << "disjoint and covering every paper";
  };
  check(mag20k(), 20'000, 14'000, 2'000, 4'000);
  // int(0.7 * 7) = 4, int(0.8 * 7) = 5; one paper: all test.
  check(gnn::mag_like_graph({.papers = 7, .features = 1}), 7, 4, 1, 2);
  check(gnn::mag_like_graph({.papers = 1, .features = 1}), 1, 0, 0, 1);
}

TEST(MagLikeGraph, EveryIdIsInRange) {
  const auto check = [](const HeteroDataset& d) {
    for (const EdgeTypeData& e : d.edge_types) {
      const int64_t ns = d.node_type(e.src_type).count, nd = d.node_type(e.dst_type).count;
      const auto in = [](int64_t id, int64_t n) { return id >= 0 && id < n; };
      EXPECT_TRUE(std::all_of(e.src.begin(), e.src.end(), [&](int64_t u) { return in(u, ns); })) << e.relation;
      EXPECT_TRUE(std::all_of(e.dst.begin(), e.dst.end(), [&](int64_t v) { return in(v, nd); })) << e.relation;
    }
    ASSERT_EQ(d.labels.size(), static_cast<size_t>(d.node_type("paper").count));
    EXPECT_TRUE(std::all_of(d.labels.begin(), d.labels.end(), [&](int64_t y) { return y >= 0 && y < d.num_classes; }));
  };
  check(mag20k());
  check(gnn::mag_like_graph({.papers = 1, .classes = 2, .features = 3}, 5));
}

TEST(MagLikeGraph, ClassesDefaultToPapersOver2000Within8And349) {
  EXPECT_EQ(gnn::mag_like_default_classes(1), 8);
  EXPECT_EQ(gnn::mag_like_default_classes(17'999), 8);
  EXPECT_EQ(gnn::mag_like_default_classes(20'000), 10);
  EXPECT_EQ(gnn::mag_like_default_classes(697'999), 348);
  EXPECT_EQ(gnn::mag_like_default_classes(698'000), 349);
  EXPECT_EQ(gnn::mag_like_default_classes(int64_t{1} << 32), 349);
  EXPECT_EQ(gnn::mag_like_graph({.papers = 100, .features = 1}).num_classes, 8);
  const HeteroDataset three = gnn::mag_like_graph({.papers = 300, .classes = 3, .features = 1});
  EXPECT_EQ(three.num_classes, 3);
  EXPECT_EQ(*std::max_element(three.labels.begin(), three.labels.end()), 2);
}

TEST(MagLikeGraph, DeterministicForASeedAndAnyThreadCount) {
  const MagLikeParams p{.papers = 20'000, .features = 4};
  const auto generate_on = [&](int threads) {
    const int before = omp_get_max_threads();
    omp_set_num_threads(threads);
    HeteroDataset d = gnn::mag_like_graph(p, 11);
    omp_set_num_threads(before);
    return d;
  };
  // 20,000 papers cross every parallel threshold of the generator.
  const HeteroDataset one = generate_on(1);
  const HeteroDataset two = generate_on(2);
  expect_same(one, two);
  const HeteroDataset other = gnn::mag_like_graph(p, 12);
  EXPECT_NE(other.labels, one.labels);
  EXPECT_NE(other.train_idx, one.train_idx);
  for (size_t r = 0; r < one.edge_types.size(); ++r) EXPECT_NE(other.edge_types[r].dst, one.edge_types[r].dst);
  EXPECT_NE(other.node_types[1].features, one.node_types[1].features);
}

TEST(MagLikeGraph, BadParametersAreNamed) {
  const auto fails = [](MagLikeParams p, const std::string& part) {
    expect_invalid([&] { (void)gnn::mag_like_graph(p); }, "mag_like_graph: " + part);
  };
  fails({.papers = 0}, "papers (0)");
  fails({.papers = -3}, "papers (-3)");
  fails({.features = 0}, "features (0)");
  fails({.homophily = 1.5}, "homophily (1.5)");
  fails({.homophily = -0.25}, "homophily (-0.25)");
  fails({.homophily = std::numeric_limits<double>::quiet_NaN()}, "homophily (nan)");
  fails({.feature_noise = -1}, "feature_noise (-1)");
  fails({.feature_noise = std::numeric_limits<double>::infinity()}, "feature_noise (inf)");
  fails({.classes = 1}, "classes (1)");
  fails({.classes = 0}, "classes (0)");
  fails({.papers = int64_t{1} << 32, .features = int64_t{1} << 30}, "papers (4294967296) * features (1073741824)");
}

TEST(MagLikeGraph, LookupsByNameFindTypesAndNameUnknownOnes) {
  const HeteroDataset d = gnn::mag_like_graph({.papers = 50, .features = 1});
  EXPECT_EQ(d.node_type("author").count, 77);
  EXPECT_EQ(&d.edge_type("paper", "has_topic", "field_of_study"), &d.edge_types[3]);
  expect_invalid([&] { (void)d.node_type("venue"); }, "'venue' is not a node type");
  expect_invalid([&] { (void)d.edge_type("paper", "writes", "author"); },
                 "('paper', 'writes', 'author') is not an edge type");
}

}  // namespace
}  // namespace edgewise::test
