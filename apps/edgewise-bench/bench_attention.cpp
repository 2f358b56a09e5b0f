// Attention primitives on a power-law graph (destination degrees Zipf-like, sources
// uniform) at (N, E) = (100K, 2M) with GAT's shape, H = 8 heads of D = 8 features:
// sddmm_add (attention logits), sddmm_dot, edge_softmax and its backward, and
// edge_gather_sum as the attention aggregation. Inputs are not rotated: [E, H] floats
// (64 MB) already exceed the last-level cache of the CI machines.
#include <memory>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/edge_softmax.hpp"
#include "edgewise/kernels/sddmm.hpp"

namespace edgewise::bench {
namespace {

constexpr int64_t kN = 100000, kE = 2000000;

enum class Kind { SddmmAdd, SddmmDot, Softmax, SoftmaxBackward, Aggregate };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::SddmmAdd: return "sddmm_add";
    case Kind::SddmmDot: return "sddmm_dot";
    case Kind::Softmax: return "edge_softmax";
    case Kind::SoftmaxBackward: return "edge_softmax_backward";
    case Kind::Aggregate: return "edge_gather_sum/attention";
  }
  return "?";
}

Prepared prepare(Device device, Kind kind, int64_t kH, int64_t kD, const Options& options) {
  std::mt19937_64 rng(options.seed);
  const auto offsets = power_law_offsets(kN, kE, 1.0, rng);
  std::vector<int32_t> indices(static_cast<size_t>(kE));
  std::uniform_int_distribution<int32_t> source(0, kN - 1);
  for (auto& i : indices) i = source(rng);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto random = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return Buffer<float>::from_host(v, device);
  };
  struct State {
    Buffer<int64_t> offsets;
    Buffer<int32_t> indices;
    Buffer<float> node_heads_a, node_heads_b, node_feats_a, node_feats_b, edge_a, edge_b, out;
    std::unique_ptr<Context> ctx;
  };
  auto st = std::make_shared<State>();
  st->offsets = Buffer<int64_t>::from_host(offsets, device);
  st->indices = Buffer<int32_t>::from_host(indices, device);
  st->node_heads_a = random(kN * kH);
  st->node_heads_b = random(kN * kH);
  st->node_feats_a = random(kN * kH * kD);
  st->node_feats_b = random(kN * kH * kD);
  st->edge_a = random(kE * kH);
  st->edge_b = random(kE * kH);
  const bool edge_out = kind != Kind::Aggregate;
  st->out = Buffer<float>(edge_out ? kE * kH : kN * kH * kD, device);
  st->ctx = std::make_unique<Context>(device);
  auto call = [st, kind, kH, kD](Context& ctx) {
    switch (kind) {
      case Kind::SddmmAdd:
        sddmm_add<float, int32_t>(st->offsets.view(), st->indices.view(), st->node_heads_a.matrix(kN, kH),
                                  st->node_heads_b.matrix(kN, kH), st->out.matrix(kE, kH), ctx);
        break;
      case Kind::SddmmDot:
        sddmm_dot<float, int32_t>(st->offsets.view(), st->indices.view(), st->node_feats_a.matrix(kN, kH * kD),
                                  st->node_feats_b.matrix(kN, kH * kD), st->out.matrix(kE, kH), ctx);
        break;
      case Kind::Softmax:
        edge_softmax<float>(st->offsets.view(), st->edge_a.matrix(kE, kH), st->out.matrix(kE, kH), ctx);
        break;
      case Kind::SoftmaxBackward:
        edge_softmax_backward<float>(st->offsets.view(), st->edge_a.matrix(kE, kH), st->edge_b.matrix(kE, kH),
                                     st->out.matrix(kE, kH), ctx);
        break;
      case Kind::Aggregate:
        edge_gather_sum<float, int32_t>(st->offsets.view(), st->indices.view(), {}, st->edge_a.matrix(kE, kH),
                                        st->node_feats_a.matrix(kN, kH * kD), st->out.matrix(kN, kH * kD), ctx);
        break;
    }
  };
  call(*st->ctx);  // validated once, then timed with validation off
  st->ctx->synchronize();
  st->ctx->validate = false;

  Prepared p;
  p.run = [st, call] {
    call(*st->ctx);
    st->ctx->synchronize();
  };
  const double graph = static_cast<double>(kE * 4 + (kN + 1) * 8);
  const double edge_values = static_cast<double>(kE * kH * 4);
  switch (kind) {
    case Kind::SddmmAdd: p.bytes = graph + 2.0 * kE * kH * 4 + edge_values; break;  // two gathered [H] rows per edge
    case Kind::SddmmDot: p.bytes = graph + 2.0 * kE * kH * kD * 4 + edge_values; break;
    case Kind::Softmax: p.bytes = static_cast<double>((kN + 1) * 8) + 2 * edge_values; break;
    case Kind::SoftmaxBackward: p.bytes = static_cast<double>((kN + 1) * 8) + 3 * edge_values; break;
    case Kind::Aggregate:
      p.bytes = graph + edge_values + static_cast<double>(kE * kH * kD * 4 + kN * kH * kD * 4);
      break;
  }
  return p;
}

EW_BENCH_CASES {
  for (Device device : bench_devices()) {
    for (Kind kind : {Kind::SddmmAdd, Kind::SddmmDot, Kind::Softmax, Kind::SoftmaxBackward, Kind::Aggregate}) {
      const std::string name = std::string(kind_name(kind)) + "/H=8,D=8/powerlaw/N=100000,E=2000000";
      register_case({name, device, [=](const Options& o) { return prepare(device, kind, 8, 8, o); }});
    }
    // One head of 64 features: the same traffic as spmm_weight_backward (C = 64).
    register_case({"sddmm_dot/H=1,D=64/powerlaw/N=100000,E=2000000", device,
                   [=](const Options& o) { return prepare(device, Kind::SddmmDot, 1, 64, o); }});
  }
}

}  // namespace
}  // namespace edgewise::bench
