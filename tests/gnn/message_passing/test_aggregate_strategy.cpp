// The measured Auto: requests (explicit strategy or form, determinism) win over the
// model, the model picks its cheapest allowed candidate, calibration is bounded in
// time, and benchmark mode times the candidates once per (graph, width, op) and keeps
// a valid winner whose result is right.
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/message_passing/aggregate_strategy.hpp"
#include "gnn_test_data.hpp"

namespace edgewise::test {
namespace {

using namespace gnn;

const AggregationChoice kFusedSegment{AggregationStrategy::Segment, MessageForm::Fused};
const AggregationChoice kMaterializedSegment{AggregationStrategy::Segment, MessageForm::Materialized};
const AggregationChoice kMaterializedScatter{AggregationStrategy::Scatter, MessageForm::Materialized};

Graph random_graph(int64_t n, int64_t e, uint64_t seed) {
  const EdgeList g = random_edges(n, e, seed);
  return Graph::from_coo(g.src, g.dst, n);
}

Tensor random_x(int64_t n, int64_t c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<size_t>(n * c));
  for (float& v : x) v = dist(rng);
  return Tensor::from_host(x, n, c);
}

// Restores the process-wide switches whatever a test does.
struct SwitchGuard {
  SwitchGuard() { clear_aggregation_caches(); }
  ~SwitchGuard() {
    set_aggregation_benchmark(false);
    set_deterministic(false);
    clear_aggregation_caches();
  }
};

bool is_candidate(const AggregationChoice& c) {
  return c == kFusedSegment || c == kMaterializedSegment || c == kMaterializedScatter;
}

TEST(AggregateStrategy, DeterminismAndExplicitRequestsWinOverTheModelAndTheBenchmark) {
  SwitchGuard guard;
  const Graph g = random_graph(300, 3000, 1);
  const Tensor x = random_x(300, 8, 2);
  for (bool benchmark : {false, true}) {
    set_aggregation_benchmark(benchmark);
    AggregationOptions o;
    o.form = MessageForm::Auto;
    o.deterministic = true;
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o).strategy, AggregationStrategy::Segment);
    o.deterministic = false;
    set_deterministic(true);
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o).strategy, AggregationStrategy::Segment);
    set_deterministic(false);
    o.strategy = AggregationStrategy::Segment;
    o.form = MessageForm::Materialized;
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kMaterializedSegment);
    o.form = MessageForm::Fused;
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kFusedSegment);
    o.strategy = AggregationStrategy::Scatter;
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kMaterializedScatter);
    o.deterministic = true;  // an explicit Scatter stays Scatter on the CPU, where it is reproducible
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kMaterializedScatter);
  }
}

TEST(AggregateStrategy, DefaultOptionsKeepTheReproducibleSegmentPathWithoutCalibrating) {
  SwitchGuard guard;
  const Graph g = random_graph(200, 1000, 8);
  const Tensor x = random_x(200, 7, 9);
  AggregationOptions o;  // strategy Auto, form Fused
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kFusedSegment);
  o.form = MessageForm::Materialized;
  EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kMaterializedSegment);
  EXPECT_EQ(choose_message_reduction(g, 7, o), AggregationStrategy::Segment);
  set_aggregation_benchmark(true);
  EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), kMaterializedSegment);
  EXPECT_FALSE(benchmarked_choice(g.id(), 7, ReduceOp::Sum, Device::cpu()).has_value()) << "nothing to benchmark";
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
}

TEST(AggregateStrategy, TheModelPicksItsCheapestAllowedCandidate) {
  SwitchGuard guard;
  const int64_t C = 16;
  const AggregationCostModel& m = calibrated_cost_model(Device::cpu(), C, ReduceOp::Sum);
  for (const PartCost* p : {&m.fused, &m.gather, &m.segment, &m.scatter}) {
    EXPECT_GE(p->per_edge_ns, 0);
    EXPECT_GE(p->per_node_ns, 0);
  }
  EXPECT_GT(m.fused.per_edge_ns + m.fused.per_node_ns, 0) << "the calibration measured nothing";
  EXPECT_EQ(&calibrated_cost_model(Device::cpu(), C, ReduceOp::Sum), &m) << "kept per (device, width)";
  const Graph g = random_graph(500, 8000, 3);
  const Tensor x = random_x(500, C, 4);
  AggregationOptions o;
  o.form = MessageForm::Auto;
  const AggregationChoice chosen = choose_aggregation(g, x.cview(), {}, o);
  for (const AggregationChoice& c : {kFusedSegment, kMaterializedSegment, kMaterializedScatter})
    EXPECT_LE(m.predict(chosen, 500, 8000), m.predict(c, 500, 8000) * kAutoSwitchMargin) << to_string(c);
  // Leaving the fused segment path needs a clear predicted win.
  if (!(chosen == kFusedSegment)) {
    EXPECT_LT(m.predict(chosen, 500, 8000) * kAutoSwitchMargin, m.predict(kFusedSegment, 500, 8000));
  }
}

TEST(AggregateStrategy, PredictionAddsTheParts) {
  AggregationCostModel m;
  m.fused = {2, 10};
  m.gather = {1, 0};
  m.segment = {3, 1};
  m.scatter = {0.5, 4};
  EXPECT_DOUBLE_EQ(m.predict(kFusedSegment, 10, 100), 2 * 100 + 10 * 10);
  EXPECT_DOUBLE_EQ(m.predict(kMaterializedSegment, 10, 100), 100 + 3 * 100 + 10);
  EXPECT_DOUBLE_EQ(m.predict(kMaterializedScatter, 10, 100), 100 + 50 + 40);
}

TEST(AggregateStrategy, CalibrationIsBoundedInTime) {
  for (int64_t C : {1, 64, 512}) {
    const auto start = std::chrono::steady_clock::now();
    const AggregationCostModel m = calibrate_aggregation(Device::cpu(), C, ReduceOp::Max);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(ms, 3000) << "C=" << C;  // a few ms to tens of ms unloaded; generous for a shared CI host
    EXPECT_GT(m.calibration_ms, 0);
  }
  EXPECT_THROW(calibrate_aggregation(Device::cpu(), 0, ReduceOp::Sum), std::invalid_argument);
}

TEST(AggregateStrategy, BenchmarkModeKeepsAValidWinnerPerGraphWidthAndOp) {
  SwitchGuard guard;
  set_aggregation_benchmark(true);
  const Graph g = random_graph(400, 6000, 5);
  const Tensor x = random_x(400, 12, 6);
  AggregationOptions o;
  o.form = MessageForm::Auto;
  EXPECT_FALSE(benchmarked_choice(g.id(), 12, ReduceOp::Sum, Device::cpu()).has_value());
  AggregationOptions reference;
  reference.strategy = AggregationStrategy::Segment;
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
    o.op = op;
    reference.op = op;
    const std::vector<float> got = aggregate(g, Variable(x), o).value().to_host_vector();
    const std::optional<AggregationChoice> winner = benchmarked_choice(g.id(), 12, op, Device::cpu());
    ASSERT_TRUE(winner.has_value()) << to_string(op);
    EXPECT_TRUE(is_candidate(*winner)) << to_string(*winner);
    // The cached winner is what the next call uses.
    EXPECT_EQ(choose_aggregation(g, x.cview(), {}, o), *winner);
    const std::vector<float> want = aggregate(g, Variable(x), reference).value().to_host_vector();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5) << "element " << i;
  }
  EXPECT_FALSE(benchmarked_choice(g.id(), 13, ReduceOp::Sum, Device::cpu()).has_value()) << "keyed by width";
  clear_aggregation_caches();
  EXPECT_FALSE(benchmarked_choice(g.id(), 12, ReduceOp::Sum, Device::cpu()).has_value());
}

}  // namespace
}  // namespace edgewise::test
