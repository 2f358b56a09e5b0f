// scatter_reduce cases: the segment_reduce shapes with a uniformly random int64
// index, float32 sum and max with arg; on CPU each is compared with a naive
// atomic loop (one OpenMP atomic per element) timed in the same run.
#include <atomic>
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/monotone.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t M, C, S;
};

enum class Variant { Sum, MaxArg };

std::string case_name(Variant variant, const std::string& kind, Shape shape) {
  return std::string("scatter_reduce/") + (variant == Variant::Sum ? "sum" : "max_arg") + "/" + kind +
         "/M=" + std::to_string(shape.M) + ",C=" + std::to_string(shape.C) + ",S=" + std::to_string(shape.S);
}

struct Inputs {
  std::vector<Buffer<float>> values;  // rotated with index: the working set exceeds the LLC
  std::vector<Buffer<int64_t>> index;
  Buffer<float> out;
  Buffer<int64_t> arg;
  std::unique_ptr<Context> ctx;
  size_t next = 0;
};

std::shared_ptr<Inputs> make_inputs(Device device, Shape shape, const Options& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<float> values(static_cast<size_t>(shape.M * shape.C));
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : values) v = dist(rng);
  std::vector<int64_t> index(static_cast<size_t>(shape.M));
  std::uniform_int_distribution<int64_t> pick(0, shape.S - 1);
  for (auto& i : index) i = pick(rng);
  auto in = std::make_shared<Inputs>();
  const double bytes = static_cast<double>(values.size()) * 4 + static_cast<double>(index.size()) * 8;
  const int copies = device.is_cpu() ? rotation_copies(bytes) : 1;
  for (int i = 0; i < copies; ++i) {
    in->values.push_back(Buffer<float>::from_host(values, device));
    in->index.push_back(Buffer<int64_t>::from_host(index, device));
  }
  in->out = Buffer<float>(shape.S * shape.C, device);
  in->arg = Buffer<int64_t>(shape.S * shape.C, device);
  in->ctx = std::make_unique<Context>(device);
  in->ctx->validate = false;  // validated once below, then the op alone is timed
  return in;
}

double op_bytes(Variant variant, Shape shape) {
  return static_cast<double>(shape.M * shape.C * 4 + shape.M * 8 + shape.S * shape.C * 4 +
                             (variant == Variant::MaxArg ? shape.S * shape.C * 8 : 0));
}

Prepared prepare_scatter(Device device, Shape shape, Variant variant, const Options& options) {
  auto in = make_inputs(device, shape, options);
  const ReduceOp op = variant == Variant::Sum ? ReduceOp::Sum : ReduceOp::Max;
  const bool with_arg = variant == Variant::MaxArg;
  auto call = [in, shape, op, with_arg](Context& ctx, size_t copy) {
    MatrixView<int64_t> arg;
    if (with_arg) arg = in->arg.matrix(shape.S, shape.C);
    scatter_reduce<float, int64_t>(in->values[copy].matrix(shape.M, shape.C), in->index[copy].view(), op,
                                   in->out.matrix(shape.S, shape.C), arg, ctx);
  };
  Context check(device);
  call(check, 0);
  Prepared p;
  p.run = [in, call] {
    call(*in->ctx, in->next++ % in->values.size());
    in->ctx->synchronize();
  };
  p.bytes = op_bytes(variant, shape);
  if (device.is_cpu()) p.baseline = case_name(variant, "naive-atomic", shape);
  return p;
}

// The loop the CPU driver has to beat: rows split over threads, one atomic per
// element (a compare-and-swap loop on the packed word for max + arg).
Prepared prepare_naive(Shape shape, Variant variant, const Options& options) {
  auto in = make_inputs(Device::cpu(), shape, options);
  auto words = std::make_shared<std::vector<uint64_t>>(static_cast<size_t>(shape.S * shape.C));
  Prepared p;
  p.run = [in, words, shape, variant] {
    const size_t copy = in->next++ % in->values.size();
    const float* v = in->values[copy].data();
    const int64_t* idx = in->index[copy].data();
    float* out = in->out.data();
    const int64_t C = shape.C;
    if (variant == Variant::Sum) {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < shape.S * C; ++i) out[i] = 0;
#pragma omp parallel for schedule(static)
      for (int64_t r = 0; r < shape.M; ++r) {
        for (int64_t c = 0; c < C; ++c) {
#pragma omp atomic
          out[idx[r] * C + c] += v[r * C + c];
        }
      }
      return;
    }
    uint64_t* w = words->data();
    int64_t* arg = in->arg.data();
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < shape.S * C; ++i) w[i] = kPackedEmpty;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < shape.M; ++r) {
      for (int64_t c = 0; c < C; ++c) {
        std::atomic_ref<uint64_t> slot(w[idx[r] * C + c]);
        const uint64_t word = extremum_word<ReduceOp::Max>(v[r * C + c], r);
        uint64_t seen = slot.load(std::memory_order_relaxed);
        while (word > seen && !slot.compare_exchange_weak(seen, word, std::memory_order_relaxed)) {
        }
      }
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < shape.S * C; ++i) {
      const int64_t row = packed_row(w[i]);
      out[i] = row < 0 ? 0.0f : v[row * C + i % C];
      arg[i] = row;
    }
  };
  p.bytes = op_bytes(variant, shape);
  return p;
}

EW_BENCH_CASES {
  const Shape shapes[] = {{1000000, 16, 10000}, {1000000, 64, 10000}, {4000000, 16, 50000}, {1000000, 16, 100}};
  for (Variant variant : {Variant::Sum, Variant::MaxArg}) {
    for (Shape shape : shapes) {
      register_case({case_name(variant, "naive-atomic", shape), Device::cpu(),
                     [=](const Options& o) { return prepare_naive(shape, variant, o); }});
      for (Device device : bench_devices()) {
        register_case({case_name(variant, "random", shape), device,
                       [=](const Options& o) { return prepare_scatter(device, shape, variant, o); }});
      }
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
