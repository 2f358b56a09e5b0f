// spmm cases: fused gather-reduce on power-law graphs (destination degrees Zipf-like,
// sources uniform) at (N, E, C) = (100K, 2M, 64) and (1M, 10M, 32) — sum unweighted /
// weighted, int32 / int64 indices, max, the CuSparse algorithm on GPU, the backward
// helpers — against the unfused form (materialise the [E, C] messages, then
// segment_reduce) measured in the same run.
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::bench {
namespace {

struct Shape {
  int64_t N, E, C;  // S = N destination rows
};

enum class Kind { Unfused, Forward, Backward, WeightBackward };

struct Variant {
  Kind kind = Kind::Forward;
  ReduceOp op = ReduceOp::Sum;
  bool weighted = false;
  bool int64_indices = false;
  bool with_arg = false;  // min/max: the arg output too (what a layer's backward needs)
  SpmmAlgorithm algorithm = SpmmAlgorithm::Native;
};

std::string shape_name(Shape s) {
  return "N=" + std::to_string(s.N) + ",E=" + std::to_string(s.E) + ",C=" + std::to_string(s.C);
}

std::string case_name(const Variant& v, Shape s) {
  std::string kind;
  switch (v.kind) {
    case Kind::Unfused: kind = "spmm/unfused-gather+segment_reduce/" + std::string(to_string(v.op)); break;
    case Kind::Forward:
      kind = "spmm/" + std::string(to_string(v.op)) + (v.with_arg ? "_arg" : "") + (v.weighted ? "/weighted" : "/unweighted") +
             (v.int64_indices ? "/i64" : "/i32") + (v.algorithm == SpmmAlgorithm::CuSparse ? "/cusparse" : "");
      break;
    case Kind::Backward: kind = "spmm_backward/" + std::string(to_string(v.op)) + "/weighted/i32"; break;
    case Kind::WeightBackward: kind = "spmm_weight_backward/" + std::string(to_string(v.op)) + "/i32"; break;
  }
  return kind + "/powerlaw/" + shape_name(s);
}

// One copy of the graph and features on a device (copies are rotated on CPU so the
// working set exceeds the last-level cache).
template <class I>
struct GraphCopy {
  Buffer<int64_t> offsets, t_offsets, t_edge_ids;
  Buffer<I> indices, t_indices;
  Buffer<float> weights, x, grad_out;
};

template <class I>
Prepared prepare_spmm(Device device, Shape shape, Variant variant, const Options& options) {
  const int64_t N = shape.N, E = shape.E, C = shape.C, S = shape.N;
  std::mt19937_64 rng(options.seed);
  const auto offsets = power_law_offsets(S, E, 1.0, rng);
  std::vector<I> indices(static_cast<size_t>(E));
  std::uniform_int_distribution<int64_t> source(0, N - 1);
  for (auto& i : indices) i = static_cast<I>(source(rng));
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<size_t>(N * C)), weights(static_cast<size_t>(E));
  for (auto& v : x) v = dist(rng);
  for (auto& w : weights) w = dist(rng);

  // The transposed CSR (by source, forward order within a source) for the backward.
  std::vector<int64_t> t_offsets, t_edge_ids;
  std::vector<I> t_indices;
  if (variant.kind == Kind::Backward) {
    t_offsets.assign(static_cast<size_t>(N + 1), 0);
    for (I u : indices) ++t_offsets[static_cast<size_t>(u) + 1];
    for (int64_t u = 0; u < N; ++u) t_offsets[u + 1] += t_offsets[u];
    std::vector<int64_t> cursor(t_offsets.begin(), t_offsets.end() - 1);
    t_indices.resize(static_cast<size_t>(E));
    t_edge_ids.resize(static_cast<size_t>(E));
    for (int64_t v = 0; v < S; ++v) {
      for (int64_t e = offsets[v]; e < offsets[v + 1]; ++e) {
        const int64_t t = cursor[static_cast<size_t>(indices[e])]++;
        t_indices[t] = static_cast<I>(v);
        t_edge_ids[t] = e;
      }
    }
  }

  struct State {
    std::vector<GraphCopy<I>> copies;
    Buffer<float> out, messages;
    Buffer<int64_t> arg;
    std::unique_ptr<Context> ctx;
    size_t next = 0;
  };
  auto st = std::make_shared<State>();
  const double copy_bytes = static_cast<double>(N * C * 4 + E * static_cast<int64_t>(sizeof(I)) + (S + 1) * 8 +
                                                (variant.weighted ? E * 4 : 0));
  const int copies = device.is_cpu() ? rotation_copies(copy_bytes) : 1;
  for (int i = 0; i < copies; ++i) {
    GraphCopy<I> g;
    g.offsets = Buffer<int64_t>::from_host(offsets, device);
    g.indices = Buffer<I>::from_host(indices, device);
    g.x = Buffer<float>::from_host(x, device);
    if (variant.weighted) g.weights = Buffer<float>::from_host(weights, device);
    if (variant.kind == Kind::Backward) {
      g.t_offsets = Buffer<int64_t>::from_host(t_offsets, device);
      g.t_indices = Buffer<I>::from_host(t_indices, device);
      g.t_edge_ids = Buffer<int64_t>::from_host(t_edge_ids, device);
    }
    if (variant.kind == Kind::Backward || variant.kind == Kind::WeightBackward) g.grad_out = g.x.to(device);
    st->copies.push_back(std::move(g));
  }
  st->out = Buffer<float>(variant.kind == Kind::WeightBackward ? E : S * C, device);
  if (variant.with_arg) st->arg = Buffer<int64_t>(S * C, device);
  if (variant.kind == Kind::Unfused) st->messages = Buffer<float>(E * C, device);
  st->ctx = std::make_unique<Context>(device);
  st->ctx->validate = false;  // validated once below, then the op is timed alone

  SpmmOptions spmm_options;
  spmm_options.algorithm = variant.algorithm;
  auto call = [st, shape, variant, spmm_options](const GraphCopy<I>& g, Context& ctx) {
    const int64_t N = shape.N, E = shape.E, C = shape.C, S = shape.N;
    switch (variant.kind) {
      case Kind::Unfused: {
        // The message form: gather x rows into an [E, C] matrix, then reduce it.
        const I* idx = g.indices.data();
        const float* xs = g.x.data();
        float* m = st->messages.data();
#pragma omp parallel for schedule(static)
        for (int64_t e = 0; e < E; ++e) {
          const float* row = xs + static_cast<int64_t>(idx[e]) * C;
          for (int64_t c = 0; c < C; ++c) m[e * C + c] = row[c];
        }
        segment_reduce<float>(st->messages.matrix(E, C), g.offsets.view(), variant.op, st->out.matrix(S, C), {}, ctx);
        break;
      }
      case Kind::Forward:
        spmm<float, I>(g.offsets.view(), g.indices.view(), g.weights.view(), g.x.matrix(N, C), variant.op,
                       st->out.matrix(S, C), variant.with_arg ? st->arg.matrix(S, C) : MatrixView<int64_t>(), ctx,
                       spmm_options);
        break;
      case Kind::Backward:
        spmm_backward<float, I>(g.t_offsets.view(), g.t_indices.view(), g.t_edge_ids.view(), g.weights.view(),
                                g.grad_out.matrix(S, C), variant.op, g.offsets.view(), st->out.matrix(N, C), ctx);
        break;
      case Kind::WeightBackward:
        spmm_weight_backward<float, I>(g.offsets.view(), g.indices.view(), g.x.matrix(N, C), g.grad_out.matrix(S, C),
                                       variant.op, {}, st->out.view(), ctx);
        break;
    }
  };
  Context check(device);
  call(st->copies[0], check);
  check.synchronize();

  Prepared p;
  p.run = [st, call] {
    call(st->copies[st->next++ % st->copies.size()], *st->ctx);
    st->ctx->synchronize();
  };
  // Bytes the op must move: gathered rows, indices, offsets, outputs (+ weights).
  const double gathered = static_cast<double>(E * C * 4);
  const double graph = static_cast<double>(E * static_cast<int64_t>(sizeof(I)) + (S + 1) * 8);
  switch (variant.kind) {
    case Kind::Unfused:
    case Kind::Forward:
      p.bytes = gathered + graph + static_cast<double>(S * C * (variant.with_arg ? 12 : 4)) +
                (variant.weighted ? E * 4.0 : 0.0);
      break;
    case Kind::Backward:
      p.bytes = gathered + graph + static_cast<double>(N * C * 4 + E * 8 + E * 4 + S * 8);
      break;
    case Kind::WeightBackward: p.bytes = 2 * gathered + graph + static_cast<double>(E * 4); break;
  }
  p.detail = copies > 1 ? std::to_string(copies) + " rotated copies" : "";
  return p;
}

void register_spmm(Device device, Shape shape, Variant variant, const std::string& baseline = "") {
  const std::string name = case_name(variant, shape);
  register_case({name, device, [=](const Options& o) {
                   Prepared p = variant.int64_indices ? prepare_spmm<int64_t>(device, shape, variant, o)
                                                      : prepare_spmm<int32_t>(device, shape, variant, o);
                   p.baseline = baseline;
                   return p;
                 }});
}

EW_BENCH_CASES {
  const Shape shapes[] = {{100000, 2000000, 64}, {1000000, 10000000, 32}};
  for (Device device : bench_devices()) {
    for (Shape shape : shapes) {
      const Variant unfused{Kind::Unfused, ReduceOp::Sum};
      const Variant sum{Kind::Forward, ReduceOp::Sum};
      Variant sum64 = sum;
      sum64.int64_indices = true;
      Variant weighted = sum;
      weighted.weighted = true;
      const Variant max{Kind::Forward, ReduceOp::Max};
      Variant max_arg = max;
      max_arg.with_arg = true;
      Variant cusparse = weighted;
      cusparse.algorithm = SpmmAlgorithm::CuSparse;
      Variant backward{Kind::Backward, ReduceOp::Sum};
      backward.weighted = true;
      const Variant weight_backward{Kind::WeightBackward, ReduceOp::Sum};

      if (device.is_cpu()) register_spmm(device, shape, unfused);  // the message form (CPU gather loop)
      register_spmm(device, shape, sum, device.is_cpu() ? case_name(unfused, shape) : "");
      register_spmm(device, shape, sum64, case_name(sum, shape));
      register_spmm(device, shape, weighted, case_name(sum, shape));
      register_spmm(device, shape, max, case_name(sum, shape));
      register_spmm(device, shape, max_arg, case_name(max, shape));
      if (device.is_cuda()) register_spmm(device, shape, cusparse, case_name(weighted, shape));
      register_spmm(device, shape, backward, case_name(weighted, shape));
      register_spmm(device, shape, weight_backward, case_name(weighted, shape));
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
