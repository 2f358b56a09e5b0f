// The measured Auto: calibration of the aggregation cost model, the choice among
// the candidates, and benchmark mode (see aggregate_strategy.hpp).
#include "edgewise/gnn/message_passing/aggregate_strategy.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::gnn {

namespace {

using Clock = std::chrono::steady_clock;

// One graph's CSR and the buffers the candidates write, on one device.
struct Inputs {
  int64_t num_nodes = 0, num_edges = 0, width = 0;
  VectorView<const int64_t> offsets;       // [N + 1]
  VectorView<const int32_t> sources;       // [E]
  VectorView<const int32_t> destinations;  // [E]
  VectorView<const float> weights;         // [E] or absent
  MatrixView<const float> x;               // [N, C]
};

struct Scratch {
  Buffer<int64_t> identity;  // [E + 1]: 0, 1, ..., E (one edge per row turns spmm into a gather)
  Buffer<float> messages;    // [E, C]
  Buffer<float> out;         // [N, C]
  Buffer<int64_t> arg;       // [N, C] when the op has an arg
  Scratch(const Inputs& in, ReduceOp op, Device device) {
    std::vector<int64_t> ids(static_cast<size_t>(in.num_edges + 1));
    std::iota(ids.begin(), ids.end(), int64_t{0});
    identity = Buffer<int64_t>::from_host(ids, device);
    messages = Buffer<float>(in.num_edges * in.width, device);
    out = Buffer<float>(in.num_nodes * in.width, device);
    if (has_arg(op)) arg = Buffer<int64_t>(in.num_nodes * in.width, device);
  }
  MatrixView<int64_t> arg_view(const Inputs& in, ReduceOp op) {
    return has_arg(op) ? arg.matrix(in.num_nodes, in.width) : MatrixView<int64_t>();
  }
};

enum class Part { Fused, Gather, Segment, Scatter };

void run_part(Part part, const Inputs& in, ReduceOp op, Scratch& s, Context& ctx) {
  const int64_t N = in.num_nodes, E = in.num_edges, C = in.width;
  switch (part) {
    case Part::Fused:
      spmm<float, int32_t>(in.offsets, in.sources, in.weights, in.x, op, s.out.matrix(N, C), s.arg_view(in, op), ctx);
      break;
    case Part::Gather:
      spmm<float, int32_t>(s.identity.view(), in.sources, in.weights, in.x, ReduceOp::Sum, s.messages.matrix(E, C), {},
                           ctx);
      break;
    case Part::Segment:
      segment_reduce<float>(s.messages.matrix(E, C), in.offsets, op, s.out.matrix(N, C), s.arg_view(in, op), ctx);
      break;
    case Part::Scatter:
      scatter_reduce<float, int32_t>(s.messages.matrix(E, C), in.destinations, op, s.out.matrix(N, C),
                                     s.arg_view(in, op), ctx);
      break;
  }
}

double time_ns(const std::function<void()>& call, Context& ctx, int repeats) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    call();
    ctx.synchronize();
    t.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  // The minimum: on a shared host, preemption only ever adds time.
  return *std::min_element(t.begin(), t.end());
}

// A power-law graph (Zipf-like in-degrees, uniform sources) of N nodes and E edges on `device`.
struct SyntheticGraph {
  Buffer<int64_t> offsets;
  Buffer<int32_t> sources, destinations;
  Buffer<float> x;
  Inputs inputs(int64_t width) const {
    Inputs in;
    in.num_nodes = offsets.size() - 1;
    in.num_edges = sources.size();
    in.width = width;
    in.offsets = offsets.view();
    in.sources = sources.view();
    in.destinations = destinations.view();
    in.x = x.matrix(in.num_nodes, width);
    return in;
  }
};

SyntheticGraph synthetic_graph(int64_t n, int64_t e, int64_t width, Device device, uint64_t seed) {
  CounterRng rng(seed, kSaltCalibration, 0);
  std::vector<double> weight(static_cast<size_t>(n));
  for (int64_t v = 0; v < n; ++v) weight[static_cast<size_t>(v)] = 1.0 / static_cast<double>(v + 1);
  shuffle(weight, rng);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<int64_t> offsets(static_cast<size_t>(n + 1), 0);
  double running = 0;
  for (int64_t v = 0; v < n; ++v) {
    running += weight[static_cast<size_t>(v)];
    offsets[static_cast<size_t>(v + 1)] = std::min<int64_t>(e, static_cast<int64_t>(running / total * static_cast<double>(e)));
  }
  offsets.back() = e;
  std::vector<int32_t> sources(static_cast<size_t>(e)), destinations(static_cast<size_t>(e));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t k = offsets[static_cast<size_t>(v)]; k < offsets[static_cast<size_t>(v + 1)]; ++k) {
      sources[static_cast<size_t>(k)] = static_cast<int32_t>(rng.below(static_cast<uint64_t>(n)));
      destinations[static_cast<size_t>(k)] = static_cast<int32_t>(v);
    }
  std::vector<float> x(static_cast<size_t>(n * width));
  for (float& v : x) v = static_cast<float>(2 * rng.uniform() - 1);
  return {Buffer<int64_t>::from_host(offsets, device), Buffer<int32_t>::from_host(sources, device),
          Buffer<int32_t>::from_host(destinations, device), Buffer<float>::from_host(x, device)};
}

// The candidates Auto may pick under these options and this device.
std::vector<AggregationChoice> allowed_candidates(const AggregationOptions& options, Device device) {
  const bool want_deterministic = options.deterministic || deterministic();
  if (options.strategy == AggregationStrategy::Scatter) {
    EW_REQUIRE(!(want_deterministic && device.is_cuda()), "aggregate",
               ": the Scatter strategy is not bitwise reproducible on CUDA, but determinism was requested");
    return {{AggregationStrategy::Scatter, MessageForm::Materialized}};
  }
  // Auto with a fixed form: the CSR path in that form, as before the model existed,
  // so the default options stay reproducible between runs (see the header).
  if (options.form != MessageForm::Auto) {
    return {{AggregationStrategy::Segment, options.form}};
  }
  std::vector<AggregationChoice> all = {{AggregationStrategy::Segment, MessageForm::Fused},
                                        {AggregationStrategy::Segment, MessageForm::Materialized}};
  if (options.strategy == AggregationStrategy::Auto && !want_deterministic)
    all.push_back({AggregationStrategy::Scatter, MessageForm::Materialized});
  return all;
}

struct ModelKey {
  int device_type, device_index;
  int64_t width;
  bool with_arg;
  auto operator<=>(const ModelKey&) const = default;
};

struct BenchmarkKey {
  uint64_t graph_id;
  int64_t width;
  int op;
  int device_type, device_index;
  int allowed_mask;
  auto operator<=>(const BenchmarkKey&) const = default;
};

struct Caches {
  std::mutex mutex;
  std::map<ModelKey, std::unique_ptr<AggregationCostModel>> models;
  std::map<BenchmarkKey, AggregationChoice> winners;
};
Caches& caches() {
  static Caches c;
  return c;
}

std::atomic<int> g_benchmark{-1};  // -1: not yet read from the environment

int choice_bit(const AggregationChoice& c) {
  if (c.strategy == AggregationStrategy::Scatter) return 4;
  return c.form == MessageForm::Fused ? 1 : 2;
}

constexpr int kBenchmarkRepeats = 2;  // timed runs per candidate in benchmark mode (the minimum counts)

AggregationChoice benchmark_candidates(const std::vector<AggregationChoice>& allowed, const Inputs& in, ReduceOp op,
                                       Device device) {
  Context& ctx = trusted_context(device);
  Scratch scratch(in, op, device);
  AggregationChoice best = allowed.front();
  double best_ns = 0;
  for (const AggregationChoice& c : allowed) {
    auto run = [&] {
      if (c.form == MessageForm::Fused) {
        run_part(Part::Fused, in, op, scratch, ctx);
      } else {
        run_part(Part::Gather, in, op, scratch, ctx);
        run_part(c.strategy == AggregationStrategy::Scatter ? Part::Scatter : Part::Segment, in, op, scratch, ctx);
      }
    };
    // A warm-up first: the first candidate would otherwise pay the scratch buffers'
    // first-touch page faults (measured: it lost to a 4x slower candidate that way).
    run();
    ctx.synchronize();
    const double ns = time_ns(run, ctx, kBenchmarkRepeats);
    if (&c == &allowed.front() || ns < best_ns) {
      best = c;
      best_ns = ns;
    }
  }
  return best;
}

}  // namespace

std::string to_string(const AggregationChoice& choice) {
  return std::string(choice.form == MessageForm::Fused ? "fused" : "materialized") + "/" +
         (choice.strategy == AggregationStrategy::Scatter ? "scatter" : "segment");
}

double AggregationCostModel::predict(const AggregationChoice& choice, int64_t n, int64_t e) const {
  if (choice.form == MessageForm::Fused) return fused.at(n, e);
  return gather.at(n, e) + (choice.strategy == AggregationStrategy::Scatter ? scatter.at(n, e) : segment.at(n, e));
}

AggregationCostModel calibrate_aggregation(Device device, int64_t width, ReduceOp op) {
  EW_REQUIRE(width >= 1, "calibrate_aggregation: width (", width, ") must be >= 1");
  const auto start = Clock::now();
  // N such that the denser graph's [E, C] messages stay <= 16 MiB.
  constexpr int64_t kLowDegree = 2, kHighDegree = 32;
  const int64_t n = std::clamp<int64_t>((int64_t{16} << 20) / (4 * kHighDegree * width), 256, 16384);
  double t[2][4] = {};
  const int64_t edges[2] = {n * kLowDegree, n * kHighDegree};
  Context& ctx = trusted_context(device);
  for (int g = 0; g < 2; ++g) {
    const SyntheticGraph graph = synthetic_graph(n, edges[g], width, device, 17 + static_cast<uint64_t>(g));
    const Inputs in = graph.inputs(width);
    Scratch scratch(in, op, device);
    for (Part part : {Part::Fused, Part::Gather, Part::Segment, Part::Scatter}) {
      run_part(part, in, op, scratch, ctx);  // warm-up (and the messages for the reductions)
      t[g][static_cast<int>(part)] = time_ns([&] { run_part(part, in, op, scratch, ctx); }, ctx, 5);
    }
  }
  auto fit = [&](Part part) {
    const double lo = t[0][static_cast<int>(part)], hi = t[1][static_cast<int>(part)];
    PartCost c;
    c.per_edge_ns = std::max(0.0, (hi - lo) / static_cast<double>(edges[1] - edges[0]));
    c.per_node_ns = std::max(0.0, (lo - c.per_edge_ns * static_cast<double>(edges[0])) / static_cast<double>(n));
    return c;
  };
  AggregationCostModel m;
  m.fused = fit(Part::Fused);
  m.gather = fit(Part::Gather);
  m.segment = fit(Part::Segment);
  m.scatter = fit(Part::Scatter);
  m.calibration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return m;
}

const AggregationCostModel& calibrated_cost_model(Device device, int64_t width, ReduceOp op) {
  const ModelKey key{static_cast<int>(device.type), device.index, width, has_arg(op)};
  Caches& c = caches();
  std::lock_guard lock(c.mutex);  // one calibration at a time: concurrent ones would time each other
  auto it = c.models.find(key);
  if (it == c.models.end())
    it = c.models.emplace(key, std::make_unique<AggregationCostModel>(calibrate_aggregation(device, width, op))).first;
  return *it->second;
}

void set_aggregation_benchmark(bool on) noexcept { g_benchmark = on ? 1 : 0; }

bool aggregation_benchmark() noexcept {
  if (g_benchmark.load() < 0) {
    const char* env = std::getenv("EDGEWISE_AGGREGATION_BENCHMARK");
    const bool on = env != nullptr && env[0] != '\0' && std::string(env) != "0";
    int expected = -1;
    g_benchmark.compare_exchange_strong(expected, on ? 1 : 0);
  }
  return g_benchmark.load() == 1;
}

AggregationChoice choose_aggregation(const Graph& graph, MatrixView<const float> x, VectorView<const float> weights,
                                     const AggregationOptions& options) {
  const Device device = graph.device();
  const std::vector<AggregationChoice> allowed = allowed_candidates(options, device);
  if (allowed.size() == 1) return allowed.front();
  const int64_t N = graph.num_nodes(), E = graph.num_edges(), C = x.cols;
  if (N == 0 || E == 0 || C == 0) return allowed.front();  // nothing to measure: the fused CSR path
  if (aggregation_benchmark()) {
    int mask = 0;
    for (const AggregationChoice& c : allowed) mask |= choice_bit(c);
    const BenchmarkKey key{graph.id(), C, static_cast<int>(options.op), static_cast<int>(device.type), device.index,
                           mask};
    Caches& c = caches();
    std::lock_guard lock(c.mutex);
    if (auto it = c.winners.find(key); it != c.winners.end()) return it->second;
    Inputs in;
    in.num_nodes = N;
    in.num_edges = E;
    in.width = C;
    in.offsets = graph.offsets().view();
    in.sources = graph.sources().view();
    in.destinations = graph.destinations().view();
    in.weights = weights;
    in.x = x;
    const AggregationChoice best = benchmark_candidates(allowed, in, options.op, device);
    c.winners.emplace(key, best);
    return best;
  }
  const AggregationCostModel& model = calibrated_cost_model(device, C, options.op);
  // The first allowed candidate is the reproducible segment path: leave it only for a
  // clear predicted win, so calibration noise does not flip the default between runs.
  AggregationChoice best = allowed.front();
  for (const AggregationChoice& c : allowed)
    if (model.predict(c, N, E) * kAutoSwitchMargin < model.predict(best, N, E)) best = c;
  return best;
}

AggregationStrategy choose_message_reduction(const Graph& graph, int64_t width, const AggregationOptions& options) {
  const std::vector<AggregationChoice> allowed = allowed_candidates(options, graph.device());
  const bool scatter_allowed = std::any_of(allowed.begin(), allowed.end(), [](const AggregationChoice& c) {
    return c.strategy == AggregationStrategy::Scatter;
  });
  const bool segment_allowed = std::any_of(allowed.begin(), allowed.end(), [](const AggregationChoice& c) {
    return c.strategy == AggregationStrategy::Segment;
  });
  if (!scatter_allowed) return AggregationStrategy::Segment;
  if (!segment_allowed || graph.num_edges() == 0 || width == 0) return allowed.front().strategy;
  const AggregationCostModel& model = calibrated_cost_model(graph.device(), width, options.op);
  const int64_t N = graph.num_nodes(), E = graph.num_edges();
  return model.scatter.at(N, E) * kAutoSwitchMargin < model.segment.at(N, E) ? AggregationStrategy::Scatter
                                                                           : AggregationStrategy::Segment;
}

std::optional<AggregationChoice> benchmarked_choice(uint64_t graph_id, int64_t width, ReduceOp op, Device device) {
  Caches& c = caches();
  std::lock_guard lock(c.mutex);
  for (const auto& [key, choice] : c.winners) {
    if (key.graph_id == graph_id && key.width == width && key.op == static_cast<int>(op) &&
        key.device_type == static_cast<int>(device.type) && key.device_index == device.index)
      return choice;
  }
  return std::nullopt;
}

void clear_aggregation_caches() {
  Caches& c = caches();
  std::lock_guard lock(c.mutex);
  c.models.clear();
  c.winners.clear();
}

}  // namespace edgewise::gnn
