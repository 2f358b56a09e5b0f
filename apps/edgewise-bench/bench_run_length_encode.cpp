// run_length_encode / unique cases: 10M sorted int64 keys (about 1M runs, and about
// 10K long runs), as one vector and as 64 chunks, against a sequential loop
// measured in the same run (CPU).
#include <algorithm>
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/run_length_encode.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t E;         // keys (quick mode: E / 10)
  int64_t distinct;  // keys uniform in [0, distinct), then sorted
  const char* label;
};

std::vector<int64_t> sorted_keys(int64_t n, int64_t distinct, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> d(0, distinct - 1);
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (auto& k : keys) k = d(rng);
  std::sort(keys.begin(), keys.end());
  return keys;
}

int64_t count_runs(const std::vector<int64_t>& keys) {
  int64_t runs = keys.empty() ? 0 : 1;
  for (size_t i = 1; i < keys.size(); ++i) runs += keys[i] != keys[i - 1];
  return runs;
}

enum class Variant { SerialLoop, Encode, EncodeChunked, Unique };

Prepared prepare(Device device, Shape shape, Variant variant, const Options& o) {
  const int64_t n = o.quick ? shape.E / 10 : shape.E;
  const auto host_keys = sorted_keys(n, shape.distinct, o.seed);
  const int64_t runs = count_runs(host_keys);
  struct State {
    std::vector<Buffer<int64_t>> keys;  // rotated copies (each a whole input)
    std::vector<std::vector<VectorView<const int64_t>>> chunks;  // per copy
    Buffer<int64_t> values, lengths;
    std::unique_ptr<Context> ctx;
    size_t next = 0;
    int64_t runs = 0;
  };
  auto st = std::make_shared<State>();
  const int copies = device.is_cpu() ? rotation_copies(8.0 * static_cast<double>(n)) : 1;
  for (int c = 0; c < copies; ++c) {
    st->keys.push_back(Buffer<int64_t>::from_host(host_keys, device));
    const int pieces = variant == Variant::EncodeChunked ? 64 : 1;
    std::vector<VectorView<const int64_t>> views;
    for (int64_t p = 0; p < pieces; ++p) {
      const int64_t begin = n * p / pieces, end = n * (p + 1) / pieces;
      views.emplace_back(st->keys.back().data() + begin, end - begin, device);
    }
    st->chunks.push_back(views);
  }
  st->values = Buffer<int64_t>(n, device);
  st->lengths = Buffer<int64_t>(n, device);
  st->ctx = std::make_unique<Context>(device);
  Prepared p;
  p.bytes = 8.0 * static_cast<double>(n) + (variant == Variant::Unique ? 8.0 : 16.0) * static_cast<double>(runs);
  p.detail = "E=" + std::to_string(n) + " runs=" + std::to_string(runs);
  if (variant == Variant::SerialLoop) {
    p.run = [st] {
      const Buffer<int64_t>& keys = st->keys[st->next++ % st->keys.size()];
      const int64_t* k = keys.data();
      int64_t* v = st->values.data();
      int64_t* l = st->lengths.data();
      int64_t r = -1;
      for (int64_t i = 0; i < keys.size(); ++i) {
        if (i == 0 || k[i] != k[i - 1]) {
          v[++r] = k[i];
          l[r] = 0;
        }
        ++l[r];
      }
      st->runs = r + 1;
    };
    return p;
  }
  p.run = [st, variant] {
    const auto& chunks = st->chunks[st->next++ % st->chunks.size()];
    const std::span<const VectorView<const int64_t>> span(chunks);
    st->runs = variant == Variant::Unique ? unique<int64_t>(span, st->values.view(), *st->ctx)
                                          : run_length_encode<int64_t>(span, st->values.view(), st->lengths.view(),
                                                                       *st->ctx);
    st->ctx->synchronize();
  };
  p.run();  // checked once, untimed
  if (st->runs != runs) throw std::runtime_error("run_length_encode bench: wrong run count");
  if (device.is_cpu()) p.baseline = std::string("run_length_encode/serial_loop/") + shape.label;
  return p;
}

EW_BENCH_CASES {
  const Shape shapes[] = {{10'000'000, 1'000'000, "int64,E=10M,runs~1M"}, {10'000'000, 10'000, "int64,E=10M,runs~10K"}};
  for (const Shape& shape : shapes) {
    register_case({std::string("run_length_encode/serial_loop/") + shape.label, Device::cpu(),
                   [=](const Options& o) { return prepare(Device::cpu(), shape, Variant::SerialLoop, o); }});
    for (Device device : bench_devices()) {
      register_case({std::string("run_length_encode/encode/") + shape.label, device,
                     [=](const Options& o) { return prepare(device, shape, Variant::Encode, o); }});
      register_case({std::string("run_length_encode/encode_64_chunks/") + shape.label, device,
                     [=](const Options& o) { return prepare(device, shape, Variant::EncodeChunked, o); }});
      register_case({std::string("run_length_encode/unique/") + shape.label, device,
                     [=](const Options& o) { return prepare(device, shape, Variant::Unique, o); }});
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
