// Minibatch building blocks: destination rows of a block (differentiable), feature
// gathering for input nodes, the importance-weighted cross-entropy.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/message_passing/block_ops.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

namespace {

struct DstRowsNode : Node {
  int64_t input_rows = 0;
  const char* name() const override { return "block_dst_rows"; }
  void backward(const Tensor& g) override {
    Tensor gx = Tensor::zeros(input_rows, g.cols(), g.device());
    copy_bytes(gx.data(), gx.device(), g.data(), g.device(), g.bytes(), engine_stream(g.device()));
    inputs[0].accumulate_grad(std::move(gx));
  }
};

// d loss / d logp is -w_i at (i, label_i), 0 elsewhere; scaled by the incoming scalar.
struct WeightedNllNode : Node {
  std::vector<int64_t> labels;
  std::vector<float> weights;
  const char* name() const override { return "weighted_nll"; }
  void backward(const Tensor& g) override {
    const float scale = g.to_host_vector()[0];
    const Variable& logp = inputs[0];
    std::vector<float> grad(static_cast<size_t>(logp.rows() * logp.cols()), 0.0f);
    for (size_t i = 0; i < labels.size(); ++i) grad[i * logp.cols() + labels[i]] = -weights[i] * scale;
    inputs[0].accumulate_grad(Tensor::from_host(grad, logp.rows(), logp.cols(), logp.device()));
  }
};

}  // namespace

Variable block_dst_rows(const Variable& h, const Block& block) {
  EW_REQUIRE(h.rows() == block.num_src, "block_dst_rows: h has ", h.rows(), " rows for a block of ", block.num_src,
             " source nodes");
  if (block.num_dst == block.num_src) return h;
  Tensor out(block.num_dst, h.cols(), h.device());
  copy_bytes(out.data(), out.device(), h.value().data(), h.device(), out.bytes(), engine_stream(h.device()));
  auto node = std::make_shared<DstRowsNode>();
  node->inputs = {h};
  node->input_rows = h.rows();
  return record(out, node);
}

FeatureGatherer::FeatureGatherer(const NodeFeatures& features) : features_(features) {
  if (features.is_sparse()) host_csr_ = features.sparse.to_csr();
}

NodeFeatures FeatureGatherer::gather(const IndexTensor& nodes) const {
  const std::vector<int64_t> ids = nodes.to_host_vector();
  const int64_t n = static_cast<int64_t>(ids.size());
  const int64_t rows = features_.rows();
  for (int64_t i = 0; i < n; ++i) {
    EW_REQUIRE(ids[i] >= 0 && ids[i] < rows, "FeatureGatherer::gather: nodes[", i, "] (", ids[i],
               ") must lie in [0, ", rows, ")");
  }
  NodeFeatures out;
  if (features_.is_sparse()) {
    CsrMatrix sub;
    sub.rows = n;
    sub.cols = host_csr_.cols;
    sub.offsets.assign(static_cast<size_t>(n + 1), 0);
    for (int64_t i = 0; i < n; ++i) {
      sub.offsets[i + 1] = sub.offsets[i] + host_csr_.offsets[ids[i] + 1] - host_csr_.offsets[ids[i]];
    }
    sub.indices.resize(static_cast<size_t>(sub.offsets[n]));
    sub.values.resize(static_cast<size_t>(sub.offsets[n]));
#pragma omp parallel for schedule(dynamic, 256) if (n > 4096)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t from = host_csr_.offsets[ids[i]], len = sub.offsets[i + 1] - sub.offsets[i];
      std::copy_n(host_csr_.indices.begin() + from, len, sub.indices.begin() + sub.offsets[i]);
      std::copy_n(host_csr_.values.begin() + from, len, sub.values.begin() + sub.offsets[i]);
    }
    out.sparse = SparseTensor::from_csr(sub, features_.device());
    return out;
  }
  // Dense: out[i] = x[ids[i]] is an spmm with one unweighted edge per output row.
  const Device device = features_.device();
  std::vector<int64_t> offsets(static_cast<size_t>(n + 1));
  std::iota(offsets.begin(), offsets.end(), int64_t{0});
  std::vector<int32_t> sources(ids.begin(), ids.end());
  Buffer<int64_t> d_offsets = upload(std::span<const int64_t>(offsets), device);
  Buffer<int32_t> d_sources = upload(std::span<const int32_t>(sources), device);
  out.dense = Tensor(n, features_.cols(), device);
  spmm<float, int32_t>(d_offsets.view(), d_sources.view(), {}, features_.dense.cview(), ReduceOp::Sum,
                       out.dense.view(), {}, engine_context(device));
  return out;
}

Variable weighted_cross_entropy(const Variable& logits, const std::vector<int64_t>& labels,
                                const std::vector<float>& weights, std::vector<float>* per_row) {
  constexpr const char* kOp = "weighted_cross_entropy";
  const int64_t B = logits.rows(), K = logits.cols();
  EW_REQUIRE(static_cast<int64_t>(labels.size()) == B, kOp, ": ", labels.size(), " labels for ", B, " rows");
  EW_REQUIRE(static_cast<int64_t>(weights.size()) == B, kOp, ": ", weights.size(), " weights for ", B, " rows");
  for (int64_t i = 0; i < B; ++i) {
    EW_REQUIRE(labels[i] >= 0 && labels[i] < K, kOp, ": labels[", i, "] (", labels[i], ") must lie in [0, ", K,
               ")");
    EW_REQUIRE(std::isfinite(weights[i]), kOp, ": weights[", i, "] (", weights[i], ") must be finite");
  }
  Variable logp = log_softmax(logits);
  const std::vector<float> h_logp = logp.value().to_host_vector();
  double loss = 0;
  if (per_row) per_row->assign(static_cast<size_t>(B), 0.0f);
  for (int64_t i = 0; i < B; ++i) {
    const float row_loss = -h_logp[i * K + labels[i]];
    loss += static_cast<double>(weights[i]) * row_loss;
    if (per_row) (*per_row)[i] = row_loss;
  }
  auto node = std::make_shared<WeightedNllNode>();
  node->inputs = {logp};
  node->labels = labels;
  node->weights = weights;
  return record(Tensor::full(1, 1, static_cast<float>(loss), logits.device()), node);
}

}  // namespace edgewise::gnn
