// SeedSampler: seed nodes drawn in proportion to updatable priorities (SegmentTree),
// merged into distinct nodes with unbiased importance weights. Tree work and copies
// run on the engine stream.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "SeedSampler";

void check_priorities(std::span<const float> values, const char* what) {
  for (size_t i = 0; i < values.size(); ++i) {
    EW_REQUIRE(std::isfinite(values[i]) && values[i] >= 0.0f, kOp, ": ", what, "[", i, "] (", values[i],
               ") must be finite and >= 0");
  }
}

// The tree's capacity, checked before the tree is built.
int64_t checked_capacity(std::span<const float> priorities) {
  EW_REQUIRE(!priorities.empty(), kOp, ": priorities must hold at least one node");
  check_priorities(priorities, "priorities");
  return static_cast<int64_t>(priorities.size());
}

std::vector<float> priorities_on(int64_t num_nodes, std::span<const int64_t> nodes, const char* factory,
                                 const std::vector<float>& value_of_node) {
  EW_REQUIRE(num_nodes >= 1, kOp, "::", factory, ": num_nodes (", num_nodes, ") must be >= 1");
  std::vector<float> p(static_cast<size_t>(num_nodes), 0.0f);
  for (size_t k = 0; k < nodes.size(); ++k) {
    EW_REQUIRE(nodes[k] >= 0 && nodes[k] < num_nodes, kOp, "::", factory, ": nodes[", k, "] (", nodes[k],
               ") must lie in [0, ", num_nodes, ")");
    p[nodes[k]] = value_of_node.empty() ? 1.0f : value_of_node[nodes[k]];
  }
  return p;
}

}  // namespace

SeedSampler::SeedSampler(std::span<const float> priorities, SeedSamplerOptions options)
    : options_(options),
      tree_(checked_capacity(priorities), options.device),
      priorities_(priorities.begin(), priorities.end()) {
  const int64_t N = num_nodes();
  std::vector<int64_t> all(static_cast<size_t>(N));
  std::iota(all.begin(), all.end(), int64_t{0});
  Buffer<int64_t> d_all = upload(std::span<const int64_t>(all), options.device);
  Buffer<float> d_p = upload(std::span<const float>(priorities_), options.device);
  tree_.update(d_all.view(), d_p.view(), engine_context(options.device));
  population_ = std::count_if(priorities_.begin(), priorities_.end(), [](float p) { return p > 0.0f; });
}

SeedSampler SeedSampler::uniform(int64_t num_nodes, std::span<const int64_t> nodes, SeedSamplerOptions options) {
  const std::vector<float> p = priorities_on(num_nodes, nodes, "uniform", {});
  return SeedSampler(p, options);
}

SeedSampler SeedSampler::by_degree(const Graph& graph, std::span<const int64_t> nodes, float power,
                                   SeedSamplerOptions options) {
  EW_REQUIRE(std::isfinite(power), kOp, "::by_degree: power (", power, ") must be finite");
  std::vector<float> value = graph.in_degree().to_host_vector();
  for (float& d : value) d = std::pow(1.0f + d, power);
  const std::vector<float> p = priorities_on(graph.num_nodes(), nodes, "by_degree", value);
  return SeedSampler(p, options);
}

SeedBatch SeedSampler::sample(int64_t batch_size, uint64_t seed) const {
  EW_REQUIRE(batch_size >= 0 && batch_size <= population_, kOp, ": batch_size (", batch_size,
             ") must lie in [0, population] = [0, ", population_, "] (nodes with a positive priority)");
  SeedBatch batch;
  if (batch_size == 0) return batch;
  Context& ctx = engine_context(options_.device);
  // p_i from the tree's own total (what the draws are proportional to). The engine
  // context trusts its inputs: the total (which can overflow) is checked here.
  const float root = tree_.total(ctx);
  EW_REQUIRE(std::isfinite(root) && root > 0.0f, kOp, ": the priorities' total (", root,
             ") must be finite and > 0 to draw");
  Buffer<int64_t> d_draws(batch_size, options_.device);
  tree_.sample(d_draws.view(), seed, options_.stratified, ctx);
  batch.draws = host_vector(d_draws.data(), batch_size, options_.device);
  std::vector<int64_t> sorted = batch.draws;
  std::sort(sorted.begin(), sorted.end());
  const double total = static_cast<double>(root);
  const double scale = 1.0 / (static_cast<double>(batch_size) * static_cast<double>(population_));
  for (size_t k = 0; k < sorted.size();) {
    size_t e = k;
    while (e < sorted.size() && sorted[e] == sorted[k]) ++e;
    const int64_t node = sorted[k];
    const double count = static_cast<double>(e - k);
    const double p = static_cast<double>(priorities_[node]) / total;
    batch.nodes.push_back(node);
    batch.counts.push_back(static_cast<int64_t>(e - k));
    batch.weights.push_back(static_cast<float>(count * scale / p));
    k = e;
  }
  return batch;
}

void SeedSampler::update_priorities(std::span<const int64_t> nodes, std::span<const float> values) {
  const int64_t N = num_nodes();
  EW_REQUIRE(nodes.size() == values.size(), kOp, "::update_priorities: ", nodes.size(), " nodes but ",
             values.size(), " values");
  for (size_t k = 0; k < nodes.size(); ++k) {
    EW_REQUIRE(nodes[k] >= 0 && nodes[k] < N, kOp, "::update_priorities: nodes[", k, "] (", nodes[k],
               ") must lie in [0, ", N, ")");
  }
  check_priorities(values, "values");
  if (nodes.empty()) return;
  Buffer<int64_t> d_nodes = upload(nodes, options_.device);
  Buffer<float> d_values = upload(values, options_.device);
  tree_.update(d_nodes.view(), d_values.view(), engine_context(options_.device));
  for (size_t k = 0; k < nodes.size(); ++k) {  // in order: the last write wins, as in the tree
    float& p = priorities_[nodes[k]];
    population_ += static_cast<int64_t>(values[k] > 0.0f) - static_cast<int64_t>(p > 0.0f);
    p = values[k] == 0.0f ? 0.0f : values[k];  // -0 stored as +0, like the tree
  }
}

}  // namespace edgewise::gnn
