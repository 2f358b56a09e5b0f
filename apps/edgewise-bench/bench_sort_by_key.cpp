// sort_by_key cases: random int64 keys (node ids below 2^20, and 40-bit keys) with a
// permutation, against std::stable_sort and libstdc++'s parallel stable sort of
// (key, index) pairs measured in the same run (CPU); the values form.
#include <parallel/algorithm>

#include <algorithm>
#include <memory>
#include <utility>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/sort_by_key.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t E;        // keys (quick mode: E / 10)
  int key_bits;     // keys uniform in [0, 2^key_bits)
  const char* label;
};

int64_t size_for(const Shape& shape, const Options& o) { return o.quick ? shape.E / 10 : shape.E; }

std::vector<int64_t> random_keys(int64_t n, int bits, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> keys(static_cast<size_t>(n));
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  for (auto& k : keys) k = static_cast<int64_t>(rng() & mask);
  return keys;
}

// The same job done with the standard library: keys -> sorted keys + permutation.
enum class Std { Serial, GnuParallel };

Prepared prepare_std(Shape shape, Std which, const Options& o) {
  const int64_t n = size_for(shape, o);
  struct State {
    std::vector<int64_t> keys, sorted, perm;
    std::vector<std::pair<int64_t, int64_t>> pairs;
  };
  auto st = std::make_shared<State>();
  st->keys = random_keys(n, shape.key_bits, o.seed);
  st->sorted.resize(n);
  st->perm.resize(n);
  st->pairs.resize(n);
  Prepared p;
  p.run = [st, which, n] {
    for (int64_t i = 0; i < n; ++i) st->pairs[i] = {st->keys[i], i};
    auto by_key = [](const std::pair<int64_t, int64_t>& a, const std::pair<int64_t, int64_t>& b) {
      return a.first < b.first;
    };
    if (which == Std::Serial) {
      std::stable_sort(st->pairs.begin(), st->pairs.end(), by_key);
    } else {
      __gnu_parallel::stable_sort(st->pairs.begin(), st->pairs.end(), by_key);
    }
    for (int64_t i = 0; i < n; ++i) {
      st->sorted[i] = st->pairs[i].first;
      st->perm[i] = st->pairs[i].second;
    }
  };
  p.bytes = 24.0 * static_cast<double>(n);  // read keys, write sorted keys + permutation
  p.max_repeats = 3;                        // seconds per call at 50M keys
  p.detail = "E=" + std::to_string(n);
  if (which == Std::GnuParallel) p.baseline = std::string("sort_by_key/std_stable_sort/") + shape.label;
  return p;
}

Prepared prepare_edgewise(Device device, Shape shape, bool values_form, const Options& o) {
  const int64_t n = size_for(shape, o);
  struct State {
    Buffer<int64_t> keys, sorted, perm, values;
    std::unique_ptr<Context> ctx;
  };
  auto st = std::make_shared<State>();
  const auto keys = random_keys(n, shape.key_bits, o.seed);
  st->keys = Buffer<int64_t>::from_host(keys, device);
  st->sorted = Buffer<int64_t>(n, device);
  st->perm = Buffer<int64_t>(n, device);
  if (values_form) st->values = Buffer<int64_t>::from_host(keys, device);  // any int64 payload
  st->ctx = std::make_unique<Context>(device);
  Prepared p;
  if (values_form) {
    p.run = [st] {
      sort_by_key<int64_t, int64_t>(st->keys.view(), st->values.view(), st->sorted.view(), st->perm.view(), *st->ctx);
      st->ctx->synchronize();
    };
    p.bytes = 32.0 * static_cast<double>(n);  // read keys + values, write both sorted
  } else {
    p.run = [st] {
      sort_by_key<int64_t>(st->keys.view(), st->sorted.view(), st->perm.view(), *st->ctx);
      st->ctx->synchronize();
    };
    p.bytes = 24.0 * static_cast<double>(n);
  }
  p.run();  // checked once, untimed: the result must be sorted
  const auto sorted = st->sorted.to_host_vector();
  if (!std::is_sorted(sorted.begin(), sorted.end())) throw std::runtime_error("sort_by_key bench: not sorted");
  if (device.is_cpu()) p.baseline = std::string("sort_by_key/std_stable_sort/") + shape.label;
  p.detail = "E=" + std::to_string(n);
  return p;
}

EW_BENCH_CASES {
  const Shape shapes[] = {{10'000'000, 20, "int64,E=10M,keys<2^20"},
                          {10'000'000, 40, "int64,E=10M,keys<2^40"},
                          {50'000'000, 20, "int64,E=50M,keys<2^20"},
                          {50'000'000, 40, "int64,E=50M,keys<2^40"}};
  for (const Shape& shape : shapes) {
    // Baselines first: a case's speedup is computed against one already timed.
    register_case({std::string("sort_by_key/std_stable_sort/") + shape.label, Device::cpu(),
                   [=](const Options& o) { return prepare_std(shape, Std::Serial, o); }});
    register_case({std::string("sort_by_key/gnu_parallel_stable_sort/") + shape.label, Device::cpu(),
                   [=](const Options& o) { return prepare_std(shape, Std::GnuParallel, o); }});
    for (Device device : bench_devices()) {
      register_case({std::string("sort_by_key/permutation/") + shape.label, device,
                     [=](const Options& o) { return prepare_edgewise(device, shape, false, o); }});
    }
  }
  for (Device device : bench_devices()) {
    register_case({std::string("sort_by_key/values_int64/") + shapes[0].label, device,
                   [=](const Options& o) { return prepare_edgewise(device, shapes[0], true, o); }});
  }
}

}  // namespace
}  // namespace edgewise::bench
