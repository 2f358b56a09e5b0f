// Aggregate-auto cases: the measured Auto's calibration on this machine per feature
// width — the time it takes, the fitted constants (ns per edge / per node of the
// fused spmm, the gather, segment_reduce and scatter_reduce) and the candidate it
// picks at average in-degree 2, 10 and 32 for N = 1M (the crossovers, if any).
#include <cstdio>
#include <memory>
#include <string>

#include "bench.hpp"
#include "edgewise/gnn/aggregate_strategy.hpp"

namespace edgewise::bench {
namespace {

std::string describe(const gnn::AggregationCostModel& m) {
  auto part = [](const char* name, const gnn::PartCost& p) {
    char text[64];
    std::snprintf(text, sizeof text, "%s %.3g/%.3g ", name, p.per_edge_ns, p.per_node_ns);
    return std::string(text);
  };
  std::string s = part("fused", m.fused) + part("gather", m.gather) + part("segment", m.segment) +
                  part("scatter", m.scatter) + "ns/edge/node; picks";
  const gnn::AggregationChoice candidates[] = {
      {gnn::AggregationStrategy::Segment, gnn::MessageForm::Fused},
      {gnn::AggregationStrategy::Segment, gnn::MessageForm::Materialized},
      {gnn::AggregationStrategy::Scatter, gnn::MessageForm::Materialized}};
  for (int64_t degree : {2, 10, 32}) {
    const int64_t n = 1000000, e = n * degree;
    gnn::AggregationChoice best = candidates[0];
    for (const auto& c : candidates)
      if (m.predict(c, n, e) < m.predict(best, n, e)) best = c;
    s += " d" + std::to_string(degree) + ":" + gnn::to_string(best);
  }
  return s;
}

EW_BENCH_CASES {
  for (Device device : bench_devices()) {
    for (int64_t width : {16, 64, 256}) {
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
        register_case({"aggregate-auto/calibration/" + std::string(to_string(op)) + "/C=" + std::to_string(width),
                       device, [=](const Options&) {
                         auto model = std::make_shared<gnn::AggregationCostModel>(
                             gnn::calibrate_aggregation(device, width, op));
                         Prepared p;
                         p.run = [=] { *model = gnn::calibrate_aggregation(device, width, op); };
                         p.detail = describe(*model);
                         p.max_repeats = 5;
                         return p;
                       }});
      }
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
