// Link prediction: negative sampling, RandomLinkSplit invariants, the pair_dot decoder
// (forward and gradient in double), AUC / Hits@K against naive references, and a
// short synthetic training run.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

#include "edgewise/gnn/train/link_prediction.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::Graph;
using gnn::NodePairs;
using Pair = std::pair<int64_t, int64_t>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

std::set<Pair> edge_set(const Graph& g) {
  const auto [src, dst] = g.coo();
  std::set<Pair> s;
  for (size_t k = 0; k < src.size(); ++k) s.insert({src[k], dst[k]});
  return s;
}

std::vector<Pair> pairs_of(const NodePairs& p) {
  std::vector<Pair> out;
  for (int64_t i = 0; i < p.size(); ++i) out.push_back({p.src[i], p.dst[i]});
  return out;
}

// ---- negative sampling ----

TEST(NegativeSampling, NeverAnEdgeNorASelfLoopAndSeeded) {
  auto rng = rng_for(911);
  std::uniform_int_distribution<int64_t> node(0, 29);
  std::vector<int64_t> src, dst;
  for (int i = 0; i < 200; ++i) {
    src.push_back(node(rng));
    dst.push_back(node(rng));
  }
  const Graph g = Graph::from_coo(src, dst, 30);
  const std::set<Pair> edges = edge_set(g);
  const NodePairs a = gnn::sample_negative_edges(g, 1000, 7);
  ASSERT_EQ(a.size(), 1000);
  for (const Pair& p : pairs_of(a)) {
    EXPECT_NE(p.first, p.second);
    EXPECT_EQ(edges.count(p), 0u) << p.first << " -> " << p.second << " is an edge";
  }
  const NodePairs b = gnn::sample_negative_edges(g, 1000, 7);
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_NE(gnn::sample_negative_edges(g, 1000, 8).src, a.src);
  EXPECT_EQ(gnn::sample_negative_edges(g, 0, 7).size(), 0);
}

TEST(NegativeSampling, RoughlyUniformOverTheNonEdges) {
  // 4 nodes, 12 ordered pairs, 8 of them edges: 4 non-edges, each ~1/4 of the draws.
  const Graph g = Graph::from_coo(std::vector<int64_t>{0, 1, 1, 2, 2, 3, 3, 0},
                                  std::vector<int64_t>{1, 0, 2, 1, 3, 2, 0, 3}, 4);
  const NodePairs s = gnn::sample_negative_edges(g, 8000, 3);
  std::map<Pair, int> counts;
  for (const Pair& p : pairs_of(s)) ++counts[p];
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [pair, count] : counts) {
    EXPECT_TRUE(pair == Pair(0, 2) || pair == Pair(2, 0) || pair == Pair(1, 3) || pair == Pair(3, 1));
    EXPECT_NEAR(count, 2000, 200);  // > 4 standard deviations
  }
}

TEST(NegativeSampling, DenseGraphsAndImpossibleRequests) {
  // Complete directed graph on 40 nodes but one pair: rejection almost always fails,
  // the enumeration fallback still gives exactly that pair.
  std::vector<int64_t> src, dst;
  for (int64_t u = 0; u < 40; ++u)
    for (int64_t v = 0; v < 40; ++v)
      if (u != v && !(u == 17 && v == 3)) {
        src.push_back(u);
        dst.push_back(v);
      }
  const NodePairs s = gnn::sample_negative_edges(Graph::from_coo(src, dst, 40), 50, 1);
  ASSERT_EQ(s.size(), 50);
  for (const Pair& p : pairs_of(s)) EXPECT_EQ(p, Pair(17, 3));
  // Complete: no negative exists.
  src.push_back(17);
  dst.push_back(3);
  const Graph complete = Graph::from_coo(src, dst, 40);
  EXPECT_NE(error_of([&] { gnn::sample_negative_edges(complete, 1, 1); }).find("no negative pair exists"),
            std::string::npos);
  // Too large to enumerate: the error says so instead of running forever.
  gnn::NegativeSamplingOptions tiny;
  tiny.max_enumerated_pairs = 100;
  EXPECT_NE(error_of([&] { gnn::sample_negative_edges(complete, 1, 1, tiny); }).find("too dense"), std::string::npos);
  const Graph single = Graph::from_coo(std::vector<int64_t>{}, std::vector<int64_t>{}, 1);
  EXPECT_NE(error_of([&] { gnn::sample_negative_edges(single, 1, 1); }).find("no pair of distinct nodes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { gnn::sample_negative_edges(complete, -1, 1); }).find("count (-1)"), std::string::npos);
}

// ---- RandomLinkSplit ----

struct UndirectedInput {
  std::vector<int64_t> src, dst;
  std::set<Pair> links;  // u < v
};

// Both directions of each link, some duplicates and self loops, in random order.
UndirectedInput undirected_input(int64_t n, int64_t e, uint64_t salt) {
  auto rng = rng_for(salt);
  std::uniform_int_distribution<int64_t> node(0, n - 1);
  UndirectedInput in;
  for (int64_t i = 0; i < e; ++i) {
    const int64_t u = node(rng), v = node(rng);
    in.src.insert(in.src.end(), {u, v});
    in.dst.insert(in.dst.end(), {v, u});
    if (u != v) in.links.insert({std::min(u, v), std::max(u, v)});
  }
  return in;
}

TEST(RandomLinkSplit, DisjointCompletePairedAndNoLeakage) {
  const UndirectedInput in = undirected_input(60, 400, 921);
  gnn::LinkSplitOptions o;
  o.num_val = 0.1;
  o.num_test = 0.2;
  o.seed = 5;
  const gnn::LinkSplit s = gnn::random_link_split(in.src, in.dst, 60, o);
  const auto L = static_cast<int64_t>(in.links.size());
  EXPECT_EQ(s.valid_pos.size(), static_cast<int64_t>(0.1 * static_cast<double>(L)));
  EXPECT_EQ(s.test_pos.size(), static_cast<int64_t>(0.2 * static_cast<double>(L)));
  EXPECT_EQ(s.train_pos.size() + s.valid_pos.size() + s.test_pos.size(), L);
  std::set<Pair> seen;
  for (const NodePairs* part : {&s.train_pos, &s.valid_pos, &s.test_pos}) {
    for (const Pair& p : pairs_of(*part)) {
      EXPECT_LT(p.first, p.second);
      EXPECT_TRUE(in.links.count(p)) << "not an input link";
      EXPECT_TRUE(seen.insert(p).second) << "in two splits or twice";
    }
  }
  EXPECT_EQ(seen, in.links);
  // Message passing: both directions of the training links only; the test graph adds validation.
  std::set<Pair> train_both, train_valid_both;
  for (const Pair& p : pairs_of(s.train_pos)) train_both.insert({{p.first, p.second}, {p.second, p.first}});
  train_valid_both = train_both;
  for (const Pair& p : pairs_of(s.valid_pos)) train_valid_both.insert({{p.first, p.second}, {p.second, p.first}});
  EXPECT_EQ(edge_set(s.train_graph), train_both);
  EXPECT_EQ(edge_set(s.test_graph), train_valid_both);
  EXPECT_EQ(s.train_graph.num_edges(), 2 * s.train_pos.size());
  for (const Pair& p : pairs_of(s.test_pos)) {
    EXPECT_FALSE(train_valid_both.count(p) || train_valid_both.count({p.second, p.first})) << "test link leaked";
  }
  // Negatives: as many as positives, never an input edge in either direction, no self loop.
  EXPECT_EQ(s.valid_neg.size(), s.valid_pos.size());
  EXPECT_EQ(s.test_neg.size(), s.test_pos.size());
  for (const NodePairs* part : {&s.valid_neg, &s.test_neg}) {
    for (const Pair& p : pairs_of(*part)) {
      EXPECT_NE(p.first, p.second);
      EXPECT_FALSE(in.links.count({std::min(p.first, p.second), std::max(p.first, p.second)}));
    }
  }
  // Seeded: the same seed gives the same split, another seed another one.
  const gnn::LinkSplit again = gnn::random_link_split(in.src, in.dst, 60, o);
  EXPECT_EQ(again.test_pos.src, s.test_pos.src);
  EXPECT_EQ(again.test_neg.dst, s.test_neg.dst);
  o.seed = 6;
  EXPECT_NE(gnn::random_link_split(in.src, in.dst, 60, o).test_pos.src, s.test_pos.src);
}

TEST(RandomLinkSplit, OneDirectionOfAnUndirectedLinkIsEnoughAndDirectedKeepsOrder) {
  // 0-1 given once, 1-2 in both directions: two links.
  const std::vector<int64_t> src = {1, 1, 2}, dst = {0, 2, 1};
  const gnn::LinkSplit u = gnn::random_link_split(src, dst, 3, {.num_val = 0, .num_test = 0});
  const std::vector<Pair> links = pairs_of(u.train_pos);
  EXPECT_EQ(std::set<Pair>(links.begin(), links.end()), (std::set<Pair>{{0, 1}, {1, 2}}));
  const gnn::LinkSplit d =
      gnn::random_link_split(src, dst, 3, {.num_val = 0, .num_test = 0, .is_undirected = false});
  EXPECT_EQ(edge_set(d.train_graph), (std::set<Pair>{{1, 0}, {1, 2}, {2, 1}}));
}

TEST(RandomLinkSplit, RejectsBadOptionsAndInputNamingThem) {
  const std::vector<int64_t> src = {0, 1}, dst = {1, 2};
  auto split_error = [&](gnn::LinkSplitOptions o, int64_t n = 3) {
    return error_of([&] { gnn::random_link_split(src, dst, n, o); });
  };
  EXPECT_NE(split_error({.num_val = -0.1}).find("num_val"), std::string::npos);
  EXPECT_NE(split_error({.num_test = 1.0}).find("num_test"), std::string::npos);
  EXPECT_NE(split_error({.num_val = 0.5, .num_test = 0.5}).find("num_val + num_test"), std::string::npos);
  EXPECT_NE(split_error({}, 2).find("dst[1] (2) must lie in [0, 2)"), std::string::npos);
  // int(num_val * L) + int(num_test * L) < L whenever there is a link, so only an
  // input without links (self loops only) leaves no training link.
  EXPECT_NE(error_of([] {
              gnn::random_link_split(std::vector<int64_t>{1}, std::vector<int64_t>{1}, 2, {});
            }).find("0 distinct link(s) leave no training link"),
            std::string::npos);
}

// ---- pair_dot ----

TEST(PairDot, ForwardAndGradientInDouble) {
  const std::vector<int64_t> s = {0, 2, 3, 3, 1}, d = {1, 2, 0, 0, 4};  // a self pair and a repeated pair
  const auto src = gnn::IndexTensor::vector(s), dst = gnn::IndexTensor::vector(d);
  check_gradients({"pair_dot",
                   {{5, 3}},
                   {},
                   [=](const std::vector<gnn::Variable>& v) { return gnn::pair_dot(v[0], src, dst); },
                   [=](const std::vector<Flat>& x) {
                     Flat y;
                     for (size_t i = 0; i < s.size(); ++i) {
                       double t = 0;
                       for (int64_t c = 0; c < 3; ++c) t += x[0][s[i] * 3 + c] * x[0][d[i] * 3 + c];
                       y.push_back(t);
                     }
                     return y;
                   }},
                  Device::cpu(), 931);
}

TEST(PairDot, RejectsIdsOutsideZNamingTheArgument) {
  gnn::Variable z(gnn::Tensor::zeros(3, 2), true);
  EXPECT_NE(error_of([&] {
              gnn::pair_dot(z, gnn::IndexTensor::vector({0, 1}), gnn::IndexTensor::vector({2, 3}));
            }).find("dst[1] (3) must lie in [0, 3)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { gnn::pair_dot(z, gnn::IndexTensor::vector({0}), gnn::IndexTensor::vector({1, 2})); })
                .find("src has 1 ids but dst has 2"),
            std::string::npos);
}

// ---- metrics ----

double naive_auc(const std::vector<float>& pos, const std::vector<float>& neg) {
  double wins = 0;
  for (float p : pos)
    for (float n : neg) wins += p > n ? 1.0 : (p == n ? 0.5 : 0.0);
  return wins / static_cast<double>(pos.size() * neg.size());
}

double naive_hits(const std::vector<float>& pos, std::vector<float> neg, int64_t k) {
  if (static_cast<int64_t>(neg.size()) < k) return 1.0;
  std::sort(neg.begin(), neg.end(), std::greater<float>());
  const float kth = neg[static_cast<size_t>(k - 1)];
  double hits = 0;
  for (float p : pos) hits += p > kth ? 1 : 0;
  return hits / static_cast<double>(pos.size());
}

TEST(RankingMetrics, AucAndHitsMatchNaiveReferencesWithTies) {
  auto rng = rng_for(941);
  for (int trial = 0; trial < 30; ++trial) {
    const int64_t P = 1 + trial % 7 * 13, Q = 1 + trial % 5 * 17;
    // Few distinct values, so ties between and within the lists are common.
    std::uniform_int_distribution<int> level(0, trial % 2 ? 4 : 1000);
    std::vector<float> pos, neg;
    for (int64_t i = 0; i < P; ++i) pos.push_back(static_cast<float>(level(rng)) + 0.5f);
    for (int64_t i = 0; i < Q; ++i) neg.push_back(static_cast<float>(level(rng)));
    for (float& x : neg) x += trial % 3 == 0 ? 0.5f : 0.0f;
    EXPECT_NEAR(gnn::roc_auc(pos, neg), naive_auc(pos, neg), 1e-12);
    for (int64_t k : {1, 3, 20, 100}) EXPECT_DOUBLE_EQ(gnn::hits_at_k(pos, neg, k), naive_hits(pos, neg, k));
  }
  const std::vector<float> a = {1, 2}, b = {1, 2};
  EXPECT_DOUBLE_EQ(gnn::roc_auc(a, b), 0.5);
  EXPECT_DOUBLE_EQ(gnn::roc_auc(std::vector<float>{3}, std::vector<float>{1, 2}), 1.0);
  EXPECT_DOUBLE_EQ(gnn::hits_at_k(std::vector<float>{2, 1}, std::vector<float>{1, 0}, 1), 0.5);
  EXPECT_NE(error_of([] { gnn::roc_auc(std::vector<float>{}, std::vector<float>{1}); }).find("positive is empty"),
            std::string::npos);
  EXPECT_NE(error_of([] { gnn::roc_auc(std::vector<float>{1}, std::vector<float>{NAN}); }).find("negative[0] is NaN"),
            std::string::npos);
  EXPECT_NE(error_of([] { gnn::hits_at_k(std::vector<float>{1}, std::vector<float>{1}, 0); }).find("k (0)"),
            std::string::npos);
}

// ---- training ----

TEST(LinkTraining, SyntheticCommunitiesAreLearned) {
  gnn::PlantedPartitionParams params;
  params.num_nodes = 400;
  // Links mostly inside 8 communities: a pair that shares a community is a link far
  // more often than a random pair, so an encoder that finds them ranks well (an
  // ideal community detector scores AUC ~ 0.5 + (0.95 - 1/8) / 2 ~ 0.91).
  params.num_classes = 8;
  params.average_degree = 10;
  params.homophily = 0.95;
  params.num_features = 64;
  params.feature_density = 0.1;
  params.num_valid = 50;
  params.num_test = 100;
  params.train_per_class = 10;
  const gnn::Dataset data = gnn::planted_partition(params, 3);
  const gnn::TrainData prepared = gnn::prepare(data, Device::cpu());
  const gnn::LinkSplit split = gnn::random_link_split(data.src(), data.dst(), data.num_nodes, {.seed = 1});
  gnn::LinkTrainOptions o;
  o.hidden_features = 32;
  o.out_features = 16;
  o.epochs = 60;
  o.log_every = 0;
  const gnn::LinkTrainResult r = gnn::train_link_predictor(split, prepared.features, o);
  ASSERT_EQ(r.history.size(), 60u);
  RecordProperty("test_auc", std::to_string(r.test_auc));
  EXPECT_GT(r.test_auc, 0.8);
  EXPECT_GT(r.best_valid_auc, 0.8);
  EXPECT_LT(r.history.back().loss, r.history.front().loss);
  EXPECT_GE(r.test_hits_at_k, 0.0);
  EXPECT_LE(r.test_hits_at_k, 1.0);
}

}  // namespace
}  // namespace edgewise::test
