// Aggregation on the tape: forward equals the oracle for every op, strategy and
// message form; gradients (w.r.t. x and learnable edge weights) match double
// finite differences; the CSR path is bitwise reproducible.
#include <gtest/gtest.h>

#include <cstring>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/autograd/functional.hpp"
#include "gradcheck.hpp"
#include "test_support.hpp"

namespace edgewise::test {
namespace {

using gnn::AggregationOptions;
using gnn::AggregationStrategy;
using gnn::Graph;
using gnn::MessageForm;
using gnn::Tensor;
using gnn::Variable;

struct SmallGraph {
  std::vector<int64_t> src, dst;
  std::vector<float> w;
  int64_t n;
};

// Power-law-ish in-degrees, an isolated node, a self loop and a duplicate edge.
SmallGraph small_graph(uint64_t salt) {
  auto rng = rng_for(salt);
  SmallGraph g{{}, {}, {}, 9};
  std::uniform_int_distribution<int64_t> node(0, 7);  // node 8 receives nothing
  std::uniform_real_distribution<float> weight(0.2f, 1.5f);
  for (int i = 0; i < 30; ++i) {
    g.src.push_back(node(rng));
    g.dst.push_back(i % 3 == 0 ? 2 : node(rng));
    g.w.push_back(weight(rng));
  }
  g.src.push_back(4), g.dst.push_back(4), g.w.push_back(0.7f);
  g.src.push_back(1), g.dst.push_back(5), g.w.push_back(1.1f);
  g.src.push_back(1), g.dst.push_back(5), g.w.push_back(0.9f);
  return g;
}

// mul, and var / std as PyG defines them (population variance; std clamped at 1e-5,
// masked to 0 at or below sqrt(1e-5)), of a nonempty list in double.
double moments_or_product_ref(const std::vector<double>& msgs, ReduceOp op) {
  if (op == ReduceOp::Mul) {
    double p = 1;
    for (double m : msgs) p *= m;
    return p;
  }
  double mean = 0, var = 0;
  for (double m : msgs) mean += m;
  mean /= static_cast<double>(msgs.size());
  for (double m : msgs) var += (m - mean) * (m - mean);
  var /= static_cast<double>(msgs.size());
  if (op == ReduceOp::Var) return var;
  const double s = std::sqrt(std::max(var, 1e-5));
  return s <= std::sqrt(1e-5) ? 0.0 : s;
}

// Reference aggregation in double over the input COO (weights optional).
Flat aggregate_ref(const SmallGraph& g, const Flat& x, int64_t C, ReduceOp op, const Flat* weights) {
  Flat out(static_cast<size_t>(g.n * C), 0.0);
  for (int64_t v = 0; v < g.n; ++v) {
    for (int64_t c = 0; c < C; ++c) {
      std::vector<double> msgs;
      for (size_t e = 0; e < g.src.size(); ++e) {
        if (g.dst[e] != v) continue;
        msgs.push_back((weights ? (*weights)[e] : 1.0) * x[g.src[e] * C + c]);
      }
      if (msgs.empty()) {
        if (op == ReduceOp::Mul) out[v * C + c] = 1.0;  // the empty product
        continue;
      }
      if (op == ReduceOp::Mul || op == ReduceOp::Var || op == ReduceOp::Std) {
        out[v * C + c] = moments_or_product_ref(msgs, op);
        continue;
      }
      double r = op == ReduceOp::Max ? -1e300 : op == ReduceOp::Min ? 1e300 : 0.0;
      for (double m : msgs) {
        if (op == ReduceOp::Max) r = std::max(r, m);
        else if (op == ReduceOp::Min) r = std::min(r, m);
        else r += m;
      }
      if (op == ReduceOp::Mean) r /= static_cast<double>(msgs.size());
      out[v * C + c] = r;
    }
  }
  return out;
}

struct Variant {
  AggregationStrategy strategy;
  MessageForm form;
  const char* name;
};
const Variant kVariants[] = {{AggregationStrategy::Segment, MessageForm::Fused, "segment/fused"},
                             {AggregationStrategy::Segment, MessageForm::Materialized, "segment/materialized"},
                             {AggregationStrategy::Scatter, MessageForm::Materialized, "scatter/materialized"}};

using AggregateTest = DeviceTest;

TEST_P(AggregateTest, EveryOpStrategyAndFormMatchesTheReferenceWithGradients) {
  const SmallGraph sg = small_graph(200);
  const int64_t C = 3;
  Graph graph = Graph::from_coo(sg.src, sg.dst, sg.n, sg.w).to(device());
  Graph unweighted = Graph::from_coo(sg.src, sg.dst, sg.n).to(device());
  Flat w64(sg.w.begin(), sg.w.end());
  for (ReduceOp op : kAllReduceOps) {
    const bool product = op == ReduceOp::Mul;  // factors away from 0: y / m stays tame
    for (const Variant& variant : kVariants) {
      for (bool weighted : {false, true}) {
        AggregationOptions o;
        o.op = op;
        o.strategy = variant.strategy;
        o.form = variant.form;
        const std::string label = std::string(to_string(op)) + " " + variant.name + (weighted ? " weighted" : "");
        check_gradients({label,
                         {{sg.n, C}},
                         {},
                         [&](const std::vector<Variable>& v) { return gnn::aggregate(weighted ? graph : unweighted, v[0], o); },
                         [&](const std::vector<Flat>& x) { return aggregate_ref(sg, x[0], C, op, weighted ? &w64 : nullptr); },
                         product ? 0.5 : -1,
                         product ? 1.2 : 1,
                         1e-5,
                         2e-3},
                        device(), 300);
      }
    }
  }
}

TEST_P(AggregateTest, LearnableEdgeWeightsGetGradients) {
  const SmallGraph sg = small_graph(201);
  const int64_t C = 2;
  Graph graph = Graph::from_coo(sg.src, sg.dst, sg.n).to(device());
  // Edge weights are given in CSR order: map the input order through edge_ids.
  const std::vector<int64_t> ids = graph.edge_ids().to_host_vector();
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Var, ReduceOp::Std}) {
    AggregationOptions o;
    o.op = op;
    check_gradients({std::string("edge weights ") + std::string(to_string(op)),
                     {{sg.n, C}, {static_cast<int64_t>(sg.src.size()), 1}},
                     {},
                     [&](const std::vector<Variable>& v) { return gnn::aggregate(graph, v[0], o, v[1]); },
                     [&](const std::vector<Flat>& x) {
                       Flat w_input(x[1].size());
                       for (size_t k = 0; k < ids.size(); ++k) w_input[ids[k]] = x[1][k];
                       return aggregate_ref(sg, x[0], C, op, &w_input);
                     },
                     0.1,
                     1.0},
                    device(), 301);
  }
}

TEST_P(AggregateTest, MessageFormAggregatesGivenMessages) {
  const SmallGraph sg = small_graph(202);
  Graph graph = Graph::from_coo(sg.src, sg.dst, sg.n).to(device());
  const std::vector<int32_t> dst = graph.destinations().to_host_vector();
  const int64_t E = graph.num_edges(), C = 2;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Var, ReduceOp::Std}) {
    AggregationOptions o;
    o.op = op;
    check_gradients({std::string("messages ") + std::string(to_string(op)),
                     {{E, C}},
                     {},
                     [&](const std::vector<Variable>& v) { return gnn::aggregate_messages(graph, v[0], o); },
                     [&](const std::vector<Flat>& m) {
                       // Messages are rows in CSR order: message k goes to dst[k].
                       SmallGraph mg{{}, {}, {}, sg.n};
                       for (int64_t k = 0; k < E; ++k) mg.src.push_back(k), mg.dst.push_back(dst[k]);
                       return aggregate_ref(mg, m[0], C, op, nullptr);
                     }},
                    device(), 302);
  }
}

TEST_P(AggregateTest, SegmentPathIsBitwiseReproducible) {
  auto rng = rng_for(203);
  std::vector<int64_t> src, dst;
  std::uniform_int_distribution<int64_t> node(0, 999);
  for (int i = 0; i < 50000; ++i) src.push_back(node(rng)), dst.push_back(i % 5 ? node(rng) : 3);
  Graph graph = Graph::from_coo(src, dst, 1000).gcn_normalized().to(device());
  auto x = random_values<float>(rng, 1000 * 16, -1, 1);
  Variable xv(Tensor::from_host(x, 1000, 16, device()));
  AggregationOptions o;
  o.deterministic = true;
  const auto first = gnn::aggregate(graph, xv, o).value().to_host_vector();
  for (int rep = 0; rep < 3; ++rep) {
    const auto again = gnn::aggregate(graph, xv, o).value().to_host_vector();
    ASSERT_EQ(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, AggregateTest, testing::ValuesIn(all_devices()), device_name);

TEST(Aggregate, StrategyNamesAndBadInput) {
  EXPECT_EQ(gnn::parse_strategy("segment"), AggregationStrategy::Segment);
  EXPECT_EQ(gnn::parse_strategy("scatter"), AggregationStrategy::Scatter);
  EXPECT_THROW(gnn::parse_strategy("magic"), std::invalid_argument);
  Graph g = Graph::from_coo(std::vector<int64_t>{0}, std::vector<int64_t>{1}, 2);
  Variable wrong(Tensor::zeros(3, 2));
  EXPECT_THROW(gnn::aggregate(g, wrong), std::invalid_argument);
  // Determinism on CUDA forbids the atomic path (checked without needing a GPU).
  AggregationOptions o;
  o.strategy = AggregationStrategy::Scatter;
  o.deterministic = true;
  EXPECT_THROW(gnn::resolve_strategy(o, Device::cuda(0)), std::invalid_argument);
  EXPECT_EQ(gnn::resolve_strategy(o, Device::cpu()), AggregationStrategy::Scatter);
  o.strategy = AggregationStrategy::Auto;
  EXPECT_EQ(gnn::resolve_strategy(o, Device::cuda(0)), AggregationStrategy::Segment);
}

}  // namespace
}  // namespace edgewise::test
