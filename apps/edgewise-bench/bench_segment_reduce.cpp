// segment_reduce cases: the published segment-path shapes, uniform and power-law
// segment lengths, float32 sum and max.
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t M, C, S;
};

Prepared prepare_segment_reduce(Device device, Shape shape, bool power_law, ReduceOp op, const Options& options) {
  std::mt19937_64 rng(options.seed);
  auto offsets = power_law ? power_law_offsets(shape.S, shape.M, 1.0, rng) : uniform_offsets(shape.S, shape.M);
  std::vector<float> values(static_cast<size_t>(shape.M * shape.C));
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : values) v = dist(rng);
  struct State {
    std::vector<Buffer<float>> values;  // rotated: the working set exceeds the LLC
    Buffer<float> out;
    Buffer<int64_t> offsets;
    std::unique_ptr<Context> ctx;
    size_t next = 0;
  };
  auto st = std::make_shared<State>();
  const int copies = device.is_cpu() ? rotation_copies(static_cast<double>(values.size()) * 4) : 1;
  for (int i = 0; i < copies; ++i) st->values.push_back(Buffer<float>::from_host(values, device));
  st->offsets = Buffer<int64_t>::from_host(offsets, device);
  st->out = Buffer<float>(shape.S * shape.C, device);
  st->ctx = std::make_unique<Context>(device);
  st->ctx->validate = false;  // validate once, then time the op alone
  Context check(device);
  segment_reduce<float>(st->values[0].matrix(shape.M, shape.C), st->offsets.view(), op,
                        st->out.matrix(shape.S, shape.C), {}, check);
  Prepared p;
  p.run = [st, shape, op] {
    const Buffer<float>& values = st->values[st->next++ % st->values.size()];
    segment_reduce<float>(values.matrix(shape.M, shape.C), st->offsets.view(), op, st->out.matrix(shape.S, shape.C),
                          {}, *st->ctx);
    st->ctx->synchronize();
  };
  p.bytes = static_cast<double>(shape.M * shape.C * 4 + (shape.S + 1) * 8 + shape.S * shape.C * 4);
  return p;
}

EW_BENCH_CASES {
  const Shape shapes[] = {{1000000, 16, 10000}, {1000000, 64, 10000}, {4000000, 16, 50000}, {1000000, 16, 100}};
  for (Device device : bench_devices()) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max}) {
      for (bool power_law : {false, true}) {
        for (Shape shape : shapes) {
          std::string name = std::string("segment_reduce/") + std::string(to_string(op)) + "/" +
                             (power_law ? "powerlaw" : "uniform") + "/M=" + std::to_string(shape.M) +
                             ",C=" + std::to_string(shape.C) + ",S=" + std::to_string(shape.S);
          register_case({name, device, [=](const Options& o) {
                           return prepare_segment_reduce(device, shape, power_law, op, o);
                         }});
        }
      }
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
