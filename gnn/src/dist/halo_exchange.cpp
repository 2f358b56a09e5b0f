// Halo exchange, owned-row slice and the per-rank loss share as autograd ops.
#include "edgewise/gnn/dist/halo_exchange.hpp"

#include <algorithm>
#include <cstring>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/spmm.hpp"

namespace edgewise::gnn::dist {

HaloExchange::HaloExchange(const Communicator& comm, const Part& part, Device device)
    : comm_(comm), part_(part), device_(device) {
  EW_REQUIRE(part.num_parts == comm.size(), "HaloExchange: the part is one of ", part.num_parts, " but ", comm.size(),
             " ranks run");
  EW_REQUIRE(part.rank == comm.rank(), "HaloExchange: rank ", comm.rank(), " holds the part of rank ", part.rank);
  if (device.is_cpu()) return;
  const int64_t sent = static_cast<int64_t>(part.send_index.size());
  std::vector<int64_t> gather_offsets(static_cast<size_t>(sent) + 1);
  std::vector<int32_t> gather_indices(static_cast<size_t>(sent));
  std::vector<int64_t> scatter_offsets(static_cast<size_t>(part.num_owned) + 1, 0);
  for (int64_t i = 0; i < sent; ++i) {
    gather_offsets[static_cast<size_t>(i) + 1] = i + 1;
    gather_indices[static_cast<size_t>(i)] = static_cast<int32_t>(part.send_index[static_cast<size_t>(i)]);
    ++scatter_offsets[static_cast<size_t>(part.send_index[static_cast<size_t>(i)]) + 1];
  }
  for (size_t u = 0; u + 1 < scatter_offsets.size(); ++u) scatter_offsets[u + 1] += scatter_offsets[u];
  std::vector<int32_t> scatter_indices(static_cast<size_t>(sent));
  std::vector<int64_t> next(scatter_offsets.begin(), scatter_offsets.end() - 1);
  for (int64_t i = 0; i < sent; ++i)
    scatter_indices[static_cast<size_t>(next[static_cast<size_t>(part.send_index[static_cast<size_t>(i)])]++)] =
        static_cast<int32_t>(i);
  gather_offsets_ = Buffer<int64_t>::from_host(gather_offsets, device);
  gather_indices_ = Buffer<int32_t>::from_host(gather_indices, device);
  scatter_offsets_ = Buffer<int64_t>::from_host(scatter_offsets, device);
  scatter_indices_ = Buffer<int32_t>::from_host(scatter_indices, device);
}

Tensor HaloExchange::forward(const Tensor& owned) const {
  EW_REQUIRE(owned.device() == device_, "halo exchange: the tensor is on ", owned.device().str(), ", the exchange on ",
             device_.str());
  EW_REQUIRE(owned.rows() == part_.num_owned, "halo exchange: ", owned.rows(), " rows for ", part_.num_owned,
             " owned nodes");
  const int64_t c = owned.cols();
  const int64_t sent = static_cast<int64_t>(part_.send_index.size());
  Tensor out(part_.num_local(), c, device_);
  copy_bytes(out.data(), device_, owned.data(), device_, owned.bytes());
  Tensor send(sent, c, device_);
  if (device_.is_cpu()) {
    for (int64_t i = 0; i < sent; ++i)
      std::memcpy(send.data() + i * c, owned.data() + part_.send_index[static_cast<size_t>(i)] * c,
                  static_cast<size_t>(c) * sizeof(float));
  } else if (sent > 0) {
    spmm<float, int32_t>(gather_offsets_.view(), gather_indices_.view(), {}, owned.cview(), ReduceOp::Sum, send.view());
  }
  comm_.alltoallv_rows(send.data(), part_.send_offsets, out.data() + part_.num_owned * c, part_.recv_offsets, c,
                       device_);
  return out;
}

Tensor HaloExchange::backward(const Tensor& grad_local) const {
  EW_REQUIRE(grad_local.rows() == part_.num_local(), "halo exchange backward: ", grad_local.rows(), " rows for ",
             part_.num_local(), " local nodes");
  const int64_t c = grad_local.cols();
  const int64_t sent = static_cast<int64_t>(part_.send_index.size());
  Tensor gx(part_.num_owned, c, device_);
  copy_bytes(gx.data(), device_, grad_local.data(), device_, gx.bytes());
  Tensor received(sent, c, device_);
  comm_.alltoallv_rows(grad_local.data() + part_.num_owned * c, part_.recv_offsets, received.data(),
                       part_.send_offsets, c, device_);
  if (device_.is_cpu()) {
    // In a fixed order (peer by peer), so the sums are reproducible.
    for (int64_t i = 0; i < sent; ++i) {
      float* row = gx.data() + part_.send_index[static_cast<size_t>(i)] * c;
      const float* add = received.data() + i * c;
      for (int64_t j = 0; j < c; ++j) row[j] += add[j];
    }
  } else if (sent > 0) {
    Tensor summed(part_.num_owned, c, device_);
    spmm<float, int32_t>(scatter_offsets_.view(), scatter_indices_.view(), {}, received.cview(), ReduceOp::Sum,
                         summed.view());
    ops::axpby(1.0f, summed, 1.0f, gx);
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
