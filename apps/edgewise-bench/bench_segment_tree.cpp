// SegmentTree cases: one prioritised-replay step (update 1024 priorities, draw 1024
// indices) at growing capacities, against the O(N) baseline that the reference
// design replaces (apply the updates to a plain array, inclusive prefix sum over
// all N priorities, one binary search per draw), measured in the same run. The tree
// costs O((B + n) log N) per step, the baseline O(N): the speedup grows with N.
#include <omp.h>

#include <algorithm>
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/segment_tree.hpp"

namespace edgewise::bench {
namespace {

constexpr int64_t kBatch = 1024;  // priorities updated per step
constexpr int64_t kDraws = 1024;  // indices drawn per step
constexpr int kBatches = 16;      // distinct update batches cycled through

struct Workload {
  std::vector<float> initial;                 // [N] priorities in (0, 1]
  std::vector<std::vector<int64_t>> indices;  // kBatches x [kBatch]
  std::vector<std::vector<float>> priorities; // kBatches x [kBatch]
};

Workload make_workload(int64_t capacity, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(1e-3f, 1.0f);
  std::uniform_int_distribution<int64_t> pick(0, capacity - 1);
  Workload w;
  w.initial.resize(static_cast<size_t>(capacity));
  for (auto& p : w.initial) p = value(rng);
  for (int b = 0; b < kBatches; ++b) {
    w.indices.emplace_back(kBatch);
    w.priorities.emplace_back(kBatch);
    for (auto& i : w.indices.back()) i = pick(rng);
    for (auto& p : w.priorities.back()) p = value(rng);
  }
  return w;
}

std::string shape(int64_t capacity) { return "capacity=" + std::to_string(capacity); }

Prepared prepare_tree(Device device, int64_t capacity, const Options& options) {
  const Workload w = make_workload(capacity, options.seed);
  struct State {
    std::vector<std::unique_ptr<SegmentTree>> trees;  // rotated: the working set exceeds the LLC
    std::vector<Buffer<int64_t>> indices;
    std::vector<Buffer<float>> priorities;
    Buffer<int64_t> out;
    std::unique_ptr<Context> ctx;
    uint64_t step = 0;
  };
  auto st = std::make_shared<State>();
  const int copies = device.is_cpu() ? rotation_copies(static_cast<double>(capacity) * 8) : 1;
  std::vector<int64_t> all(static_cast<size_t>(capacity));
  for (int64_t i = 0; i < capacity; ++i) all[i] = i;
  auto d_all = Buffer<int64_t>::from_host(all, device);
  auto d_initial = Buffer<float>::from_host(w.initial, device);
  Context check(device);
  for (int c = 0; c < copies; ++c) {
    st->trees.push_back(std::make_unique<SegmentTree>(capacity, device));
    st->trees.back()->update(d_all.view(), d_initial.view(), check);
  }
  for (int b = 0; b < kBatches; ++b) {
    st->indices.push_back(Buffer<int64_t>::from_host(w.indices[b], device));
    st->priorities.push_back(Buffer<float>::from_host(w.priorities[b], device));
  }
  st->out = Buffer<int64_t>(kDraws, device);
  st->trees[0]->sample(st->out.view(), 0, false, check);  // validate once, then time the op alone
  st->ctx = std::make_unique<Context>(device);
  st->ctx->validate = false;
  Prepared p;
  p.run = [st] {
    const uint64_t step = st->step++;
    SegmentTree& tree = *st->trees[step % st->trees.size()];
    tree.update(st->indices[step % kBatches].view(), st->priorities[step % kBatches].view(), *st->ctx);
    tree.sample(st->out.view(), step, false, *st->ctx);
    st->ctx->synchronize();
  };
  // The O(N) baseline exists on CPU only (a GPU one needs CUDA code in benchmarks/).
  if (device.is_cpu()) p.baseline = "prefix_sum_search/update1024+sample1024/" + shape(capacity);
  p.detail = "O((B + n) log N), latency-bound";
  return p;
}

// Inclusive prefix sum of p[0..n) into cs, two passes over per-thread chunks.
void inclusive_scan_parallel(const float* p, float* cs, int64_t n) {
  const int threads = omp_get_max_threads();
  std::vector<float> chunk_sum(static_cast<size_t>(threads) + 1, 0.0f);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    float running = 0.0f;
    for (int64_t i = begin; i < end; ++i) {
      running += p[i];
      cs[i] = running;
    }
    chunk_sum[t + 1] = running;
#pragma omp barrier
#pragma omp single
    for (int k = 1; k <= threads; ++k) chunk_sum[k] += chunk_sum[k - 1];
    const float offset = chunk_sum[t];
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) cs[i] += offset;
  }
}

// The baseline on CPU: the same updates and the same Philox uniforms, drawn by
// binary search over a freshly computed prefix sum.
Prepared prepare_prefix_sum_search(int64_t capacity, const Options& options) {
  const Workload w = make_workload(capacity, options.seed);
  struct State {
    std::vector<std::vector<float>> priorities;  // rotated like the trees
    std::vector<float> cumulative;
    std::vector<int64_t> out;
    Workload w;
    uint64_t step = 0;
  };
  auto st = std::make_shared<State>();
  const int copies = rotation_copies(static_cast<double>(capacity) * 8);
  for (int c = 0; c < copies; ++c) st->priorities.push_back(w.initial);
  st->cumulative.resize(static_cast<size_t>(capacity));
  st->out.resize(kDraws);
  st->w = w;
  Prepared p;
  p.run = [st, capacity] {
    const uint64_t step = st->step++;
    std::vector<float>& pri = st->priorities[step % st->priorities.size()];
    const auto& idx = st->w.indices[step % kBatches];
    const auto& val = st->w.priorities[step % kBatches];
    for (int64_t k = 0; k < kBatch; ++k) pri[idx[k]] = val[k];
    float* cs = st->cumulative.data();
    inclusive_scan_parallel(pri.data(), cs, capacity);
    const double total = cs[capacity - 1];
    int64_t* out = st->out.data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kDraws; ++i) {
      const PhiloxBlock bits = philox_block(step, SegmentTree::kSampleStream, static_cast<uint64_t>(i));
      const double u = uniform_double(bits.v[0], bits.v[1]) * total;
      const int64_t at = std::upper_bound(cs, cs + capacity, u, [](double x, float c) { return x < c; }) - cs;
      out[i] = std::min(at, capacity - 1);
    }
  };
  p.bytes = static_cast<double>(capacity) * 8;  // the scan reads N priorities and writes N sums
  return p;
}

EW_BENCH_CASES {
  const int64_t capacities[] = {131072, 500000, 4194304};
  for (int64_t capacity : capacities) {
    register_case({"prefix_sum_search/update1024+sample1024/" + shape(capacity), Device::cpu(),
                   [=](const Options& o) { return prepare_prefix_sum_search(capacity, o); }});
  }
  for (Device device : bench_devices()) {
    for (int64_t capacity : capacities) {
      register_case({"segment_tree/update1024+sample1024/" + shape(capacity), device,
                     [=](const Options& o) { return prepare_tree(device, capacity, o); }});
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
