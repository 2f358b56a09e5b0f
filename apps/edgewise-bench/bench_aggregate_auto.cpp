// Aggregate-auto cases: the measured Auto's calibration on this machine per feature
// width — the time it takes, the fitted constants (ns per edge / per node of the
// fused spmm, the gather, segment_reduce and scatter_reduce) and the candidate it
// picks at average in-degree 2, 10 and 32 for N = 1M (the crossovers, if any);
// then every candidate timed on a power-law graph of N = 100K at those degrees,
// with the model's pick and benchmark mode's pick for that graph in the row, so the
// real crossovers (if any) can be read against the predicted ones.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench.hpp"
#include "edgewise/gnn/message_passing/aggregate_strategy.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"

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

// A power-law in-degree graph (Zipf exponent 1, uniform sources) with features [N, C].
struct CandidateInputs {
  gnn::Graph graph;
  Buffer<float> x, messages, out;
  Buffer<int64_t> identity, arg;  // identity [E + 1]: one edge per row turns spmm into the gather
  Context ctx{Device::cpu()};
};

std::shared_ptr<CandidateInputs> candidate_inputs(int64_t n, int64_t degree, int64_t width, ReduceOp op,
                                                  const Options& o) {
  std::mt19937_64 rng(o.seed);
  const int64_t e = n * degree;
  const std::vector<int64_t> off = power_law_offsets(n, e, 1.0, rng);
  std::vector<int64_t> src(static_cast<size_t>(e)), dst(static_cast<size_t>(e));
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t k = off[v]; k < off[v + 1]; ++k) {
      src[k] = pick(rng);
      dst[k] = v;
    }
  auto in = std::make_shared<CandidateInputs>();
  in->graph = gnn::Graph::from_coo(src, dst, n);
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> x(static_cast<size_t>(n * width));
  for (float& v : x) v = value(rng);
  in->x = Buffer<float>::from_host(x);
  in->messages = Buffer<float>(e * width);
  in->out = Buffer<float>(n * width);
  if (has_arg(op)) in->arg = Buffer<int64_t>(n * width);
  std::vector<int64_t> ids(static_cast<size_t>(e + 1));
  for (int64_t k = 0; k <= e; ++k) ids[k] = k;
  in->identity = Buffer<int64_t>::from_host(ids);
  in->ctx.validate = false;
  return in;
}

// One forward of `choice` (what aggregate() runs for it, without the tape).
void run_candidate(CandidateInputs& in, const gnn::AggregationChoice& choice, ReduceOp op, int64_t width) {
  const gnn::Graph& g = in.graph;
  const int64_t n = g.num_nodes(), e = g.num_edges();
  const MatrixView<int64_t> arg = has_arg(op) ? in.arg.matrix(n, width) : MatrixView<int64_t>();
  if (choice.form == gnn::MessageForm::Fused) {
    spmm<float, int32_t>(g.offsets().view(), g.sources().view(), {}, in.x.matrix(n, width), op, in.out.matrix(n, width),
                         arg, in.ctx);
    return;
  }
  spmm<float, int32_t>(in.identity.view(), g.sources().view(), {}, in.x.matrix(n, width), ReduceOp::Sum,
                       in.messages.matrix(e, width), {}, in.ctx);
  if (choice.strategy == gnn::AggregationStrategy::Scatter) {
    scatter_reduce<float, int32_t>(in.messages.matrix(e, width), g.destinations().view(), op, in.out.matrix(n, width),
                                   arg, in.ctx);
  } else {
    segment_reduce<float>(in.messages.matrix(e, width), g.offsets().view(), op, in.out.matrix(n, width), arg, in.ctx);
  }
}

// The model's pick and benchmark mode's pick for this graph.
std::string picks(const CandidateInputs& in, ReduceOp op, int64_t width) {
  gnn::AggregationOptions options;
  options.op = op;
  options.form = gnn::MessageForm::Auto;
  options.use_edge_weight = false;
  const MatrixView<const float> x = in.x.matrix(in.graph.num_nodes(), width);
  const gnn::AggregationChoice model = gnn::choose_aggregation(in.graph, x, {}, options);
  const bool was = gnn::aggregation_benchmark();
  gnn::set_aggregation_benchmark(true);
  const gnn::AggregationChoice measured = gnn::choose_aggregation(in.graph, x, {}, options);
  gnn::set_aggregation_benchmark(was);
  return "model picks " + gnn::to_string(model) + ", benchmark mode " + gnn::to_string(measured);
}

EW_BENCH_CASES {
  const gnn::AggregationChoice candidates[] = {
      {gnn::AggregationStrategy::Segment, gnn::MessageForm::Fused},
      {gnn::AggregationStrategy::Segment, gnn::MessageForm::Materialized},
      {gnn::AggregationStrategy::Scatter, gnn::MessageForm::Materialized}};
  for (int64_t width : {16, 64}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
      for (int64_t degree : {2, 10, 32}) {
        const std::string shape = std::string(to_string(op)) + "/C=" + std::to_string(width) + "/N=100K,deg=" +
                                  std::to_string(degree);
        const std::string base = "aggregate-auto/candidate/fused-segment/" + shape;
        for (const gnn::AggregationChoice& choice : candidates) {
          std::string label = gnn::to_string(choice);
          label[label.find('/')] = '-';
          const bool fused = choice.form == gnn::MessageForm::Fused;
          register_case({"aggregate-auto/candidate/" + label + "/" + shape, Device::cpu(), [=](const Options& o) {
                           const int64_t n = o.quick ? 20000 : 100000;
                           auto in = candidate_inputs(n, degree, width, op, o);
                           Prepared p;
                           p.run = [=] { run_candidate(*in, choice, op, width); };
                           const double e = static_cast<double>(in->graph.num_edges());
                           // Gathered rows, indices and the output; the materialised forms also
                           // write and re-read [E, C].
                           p.bytes = e * static_cast<double>(width) * 4 * (fused ? 1 : 3) + e * 4 +
                                     static_cast<double>(n * width) * 4;
                           if (fused) {
                             p.detail = picks(*in, op, width);
                           } else {
                             p.baseline = base;
                           }
                           p.max_repeats = 10;
                           return p;
                         }});
        }
      }
    }
  }

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
