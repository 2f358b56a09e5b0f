// Halo exchange, owned-row slice and the per-rank loss share as autograd ops.
#include "edgewise/gnn/dist/halo_exchange.hpp"

#include <algorithm>
#include <cstring>

#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::dist {

HaloExchange::HaloExchange(const Communicator& comm, const Part& part) : comm_(comm), part_(part) {
  EW_REQUIRE(part.num_parts == comm.size(), "HaloExchange: the part is one of ", part.num_parts, " but ", comm.size(),
             " ranks run");
  EW_REQUIRE(part.rank == comm.rank(), "HaloExchange: rank ", comm.rank(), " holds the part of rank ", part.rank);
}

Tensor HaloExchange::forward(const Tensor& owned) const {
  EW_REQUIRE(owned.device().is_cpu(), "halo exchange: tensors must be on the CPU (got ", owned.device().str(), ")");
  EW_REQUIRE(owned.rows() == part_.num_owned, "halo exchange: ", owned.rows(), " rows for ", part_.num_owned,
             " owned nodes");
  const int64_t c = owned.cols();
  Tensor out(part_.num_local(), c);
  std::memcpy(out.data(), owned.data(), owned.bytes());
  std::vector<float> send(part_.send_index.size() * static_cast<size_t>(c));
  for (size_t i = 0; i < part_.send_index.size(); ++i)
    std::memcpy(send.data() + i * static_cast<size_t>(c), owned.data() + part_.send_index[i] * c,
                static_cast<size_t>(c) * sizeof(float));
  comm_.alltoallv_rows(send.data(), part_.send_offsets, out.data() + part_.num_owned * c, part_.recv_offsets, c);
  return out;
}

Tensor HaloExchange::backward(const Tensor& grad_local) const {
  EW_REQUIRE(grad_local.rows() == part_.num_local(), "halo exchange backward: ", grad_local.rows(), " rows for ",
             part_.num_local(), " local nodes");
  const int64_t c = grad_local.cols();
  Tensor gx(part_.num_owned, c);
  std::memcpy(gx.data(), grad_local.data(), static_cast<size_t>(part_.num_owned * c) * sizeof(float));
  std::vector<float> received(part_.send_index.size() * static_cast<size_t>(c));
  comm_.alltoallv_rows(grad_local.data() + part_.num_owned * c, part_.recv_offsets, received.data(),
                       part_.send_offsets, c);
  // In a fixed order (peer by peer), so the sums are reproducible.
  for (size_t i = 0; i < part_.send_index.size(); ++i) {
    float* row = gx.data() + part_.send_index[i] * c;
    const float* add = received.data() + i * static_cast<size_t>(c);
    for (int64_t j = 0; j < c; ++j) row[j] += add[j];
  }
  return gx;
}

namespace {

struct HaloExchangeNode : Node {
  const HaloExchange* halo = nullptr;
  const char* name() const override { return "halo_exchange"; }
  void backward(const Tensor& g) override { inputs[0].accumulate_grad(halo->backward(g)); }
};

struct FirstRowsNode : Node {
  int64_t input_rows = 0;
  const char* name() const override { return "first_rows"; }
  void backward(const Tensor& g) override {
    Tensor gx = Tensor::zeros(input_rows, g.cols(), g.device());
    copy_bytes(gx.data(), gx.device(), g.data(), g.device(), g.bytes());
    inputs[0].accumulate_grad(std::move(gx));
  }
};

struct LossShareNode : Node {
  Tensor input_grad;  // d share / d logits
  const char* name() const override { return "cross_entropy_share"; }
  void backward(const Tensor& g) override {
    const float scale = g.to_host_vector()[0];
    Tensor gx(input_grad.rows(), input_grad.cols(), input_grad.device());
    ops::scale(input_grad, scale, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

}  // namespace

Variable halo_exchange(const HaloExchange& halo, const Variable& owned) {
  auto node = std::make_shared<HaloExchangeNode>();
  node->inputs = {owned};
  node->halo = &halo;
  return record(halo.forward(owned.value()), node);
}

Variable first_rows(const Variable& x, int64_t rows) {
  EW_REQUIRE(rows >= 0 && rows <= x.rows(), "first_rows: ", rows, " of ", x.rows(), " rows");
  Tensor y(rows, x.cols(), x.device());
  copy_bytes(y.data(), y.device(), x.value().data(), x.device(), y.bytes());
  auto node = std::make_shared<FirstRowsNode>();
  node->inputs = {x};
  node->input_rows = x.rows();
  return record(y, node);
}

Variable cross_entropy_share(const Variable& logits, const IndexTensor& labels, const IndexTensor& rows,
                             int64_t global_rows) {
  EW_REQUIRE(global_rows > 0, "cross_entropy_share: no training rows on any rank");
  Variable logp = log_softmax(logits);
  const bool need_grad = grad_enabled() && logp.requires_grad();
  Tensor grad;
  float share = 0.0f;
  if (need_grad) grad = Tensor::zeros(logp.rows(), logp.cols(), logp.device());
  if (rows.numel() > 0) {
    // nll_loss gives the mean over the local rows and its gradient; rescale both
    // from the local to the global count.
    const float mean = ops::nll_loss(logp.value(), labels, rows, need_grad ? &grad : nullptr);
    const float to_global = static_cast<float>(static_cast<double>(rows.numel()) / static_cast<double>(global_rows));
    share = static_cast<float>(static_cast<double>(mean) * static_cast<double>(rows.numel()) /
                               static_cast<double>(global_rows));
    if (need_grad) ops::scale(grad, to_global, grad);
  }
  auto node = std::make_shared<LossShareNode>();
  node->inputs = {logp};
  node->input_grad = grad;
  return record(Tensor::full(1, 1, share, logp.device()), node);
}

}  // namespace edgewise::gnn::dist
