// offsets_from_keys cases: 10M sorted int64 keys into 1M segments (uniform and
// power-law segment sizes), with and without validation, against a sequential
// counting loop measured in the same run (CPU).
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t E;  // keys (quick mode: E / 10)
  int64_t S;  // segments
  bool power_law;
  const char* label;
};

enum class Variant { SerialCount, Trusted, Validated };

Prepared prepare(Device device, Shape shape, Variant variant, const Options& o) {
  const int64_t n = o.quick ? shape.E / 10 : shape.E;
  std::mt19937_64 rng(o.seed);
  const auto off = shape.power_law ? power_law_offsets(shape.S, n, 1.0, rng) : uniform_offsets(shape.S, n);
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (int64_t s = 0; s < shape.S; ++s) std::fill(keys.begin() + off[s], keys.begin() + off[s + 1], s);
  struct State {
    std::vector<Buffer<int64_t>> keys;  // rotated copies
    Buffer<int64_t> offsets;
    std::unique_ptr<Context> ctx;
    size_t next = 0;
  };
  auto st = std::make_shared<State>();
  const int copies = device.is_cpu() ? rotation_copies(8.0 * static_cast<double>(n)) : 1;
  for (int c = 0; c < copies; ++c) st->keys.push_back(Buffer<int64_t>::from_host(keys, device));
  st->offsets = Buffer<int64_t>(shape.S + 1, device);
  st->ctx = std::make_unique<Context>(device);
  st->ctx->validate = variant == Variant::Validated;
  Prepared p;
  p.bytes = 8.0 * static_cast<double>(n) + 8.0 * static_cast<double>(shape.S + 1);
  p.detail = "E=" + std::to_string(n);
  if (variant == Variant::SerialCount) {
    const int64_t S = shape.S;
    p.run = [st, S] {
      const Buffer<int64_t>& k = st->keys[st->next++ % st->keys.size()];
      int64_t* out = st->offsets.data();
      std::fill(out, out + S + 1, 0);
      for (int64_t i = 0; i < k.size(); ++i) ++out[k.data()[i] + 1];
      for (int64_t s = 0; s < S; ++s) out[s + 1] += out[s];
    };
    return p;
  }
  p.run = [st] {
    offsets_from_keys<int64_t>(st->keys[st->next++ % st->keys.size()].view(), st->offsets.view(), *st->ctx);
    st->ctx->synchronize();
  };
  p.run();  // checked once, untimed
  if (st->offsets.to_host_vector() != off) throw std::runtime_error("offsets_from_keys bench: wrong offsets");
  if (device.is_cpu()) p.baseline = std::string("offsets_from_keys/serial_count/") + shape.label;
  return p;
}

EW_BENCH_CASES {
  const Shape shapes[] = {{10'000'000, 1'000'000, false, "int64,E=10M,S=1M,uniform"},
                          {10'000'000, 1'000'000, true, "int64,E=10M,S=1M,powerlaw"}};
  for (const Shape& shape : shapes) {
    register_case({std::string("offsets_from_keys/serial_count/") + shape.label, Device::cpu(),
                   [=](const Options& o) { return prepare(Device::cpu(), shape, Variant::SerialCount, o); }});
    for (Device device : bench_devices()) {
      register_case({std::string("offsets_from_keys/trusted/") + shape.label, device,
                     [=](const Options& o) { return prepare(device, shape, Variant::Trusted, o); }});
      register_case({std::string("offsets_from_keys/validated/") + shape.label, device,
                     [=](const Options& o) { return prepare(device, shape, Variant::Validated, o); }});
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
