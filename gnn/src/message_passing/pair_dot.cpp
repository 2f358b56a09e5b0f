// pair_dot: the dot-product link decoder out[i] = <z[src[i]], z[dst[i]]>, with backward
// d z[src[i]] += g[i] z[dst[i]], d z[dst[i]] += g[i] z[src[i]].
#include <memory>

#include "edgewise/gnn/message_passing/pair_dot.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "pair_dot";

struct PairDotNode : Node {
  std::vector<int64_t> src, dst;
  Tensor z_host;  // the forward input on the host
  const char* name() const override { return kOp; }
  void backward(const Tensor& grad_output) override {
    if (!inputs[0].requires_grad()) return;
    const std::vector<float> g = grad_output.to_host_vector();
    const int64_t C = z_host.cols();
    const float* z = z_host.data();
    Tensor gz = Tensor::zeros(z_host.rows(), C);
    float* out = gz.data();
    // Serial: pairs share nodes, and a fixed order keeps the sums reproducible.
    for (size_t i = 0; i < src.size(); ++i) {
      const float* zs = z + src[i] * C;
      const float* zd = z + dst[i] * C;
      float* gs = out + src[i] * C;
      float* gd = out + dst[i] * C;
      for (int64_t c = 0; c < C; ++c) {
        gs[c] += g[i] * zd[c];
        gd[c] += g[i] * zs[c];
      }
    }
    inputs[0].accumulate_grad(inputs[0].device().is_cpu() ? std::move(gz) : gz.to(inputs[0].device()));
  }
};

std::vector<int64_t> checked_ids(const IndexTensor& ids, const char* argument, int64_t num_nodes) {
  EW_REQUIRE(ids.defined(), kOp, ": ", argument, " is undefined");
  EW_REQUIRE(ids.cols() == 1 || ids.rows() == 1, kOp, ": ", argument, " ", ids.shape_str(), " must be [P] or [P, 1]");
  std::vector<int64_t> host = ids.to_host_vector();
  for (size_t i = 0; i < host.size(); ++i) {
    EW_REQUIRE(host[i] >= 0 && host[i] < num_nodes, kOp, ": ", argument, "[", i, "] (", host[i],
               ") must lie in [0, ", num_nodes, ")");
  }
  return host;
}

}  // namespace

Variable pair_dot(const Variable& z, const IndexTensor& src, const IndexTensor& dst) {
  EW_REQUIRE(z.defined(), kOp, ": z is undefined");
  EW_REQUIRE(src.defined() && dst.defined() && src.numel() == dst.numel(), kOp, ": src has ", src.numel(),
             " ids but dst has ", dst.numel());
  EW_REQUIRE(src.device() == z.device() && dst.device() == z.device(), kOp, ": src (", src.device().str(),
             ") and dst (", dst.device().str(), ") must be on z's device (", z.device().str(), ")");
  auto node = std::make_shared<PairDotNode>();
  node->inputs = {z};
  node->src = checked_ids(src, "src", z.rows());
  node->dst = checked_ids(dst, "dst", z.rows());
  node->z_host = z.device().is_cpu() ? z.value() : z.value().to(Device::cpu());
  const int64_t P = static_cast<int64_t>(node->src.size());
  const int64_t C = z.cols();
  Tensor y(P, 1);
  const float* zv = node->z_host.data();
  float* yv = y.data();
#pragma omp parallel for if (P * C > (1 << 16))
  for (int64_t i = 0; i < P; ++i) {
    const float* a = zv + node->src[i] * C;
    const float* b = zv + node->dst[i] * C;
    float s = 0;
    for (int64_t c = 0; c < C; ++c) s += a[c] * b[c];
    yv[i] = s;
  }
  return record(z.device().is_cpu() ? y : y.to(z.device()), node);
}

}  // namespace edgewise::gnn
