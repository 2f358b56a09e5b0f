// Global pooling: segment_reduce over graph offsets, with its backward on the tape.
#include "edgewise/gnn/pooling.hpp"

#include <algorithm>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::gnn {

namespace {

// The backward scatters each graph's gradient row back to its node rows: host
// loops (B x C and N x C work, tiny next to the convolutions), the tensors moved
// through the host when they live on a GPU.
struct GlobalPoolNode : Node {
  IndexTensor offsets;  // [B + 1, 1]
  IndexTensor arg;      // [B, C], min/max only
  ReduceOp op = ReduceOp::Sum;
  const char* name() const override { return "global_pool"; }
  void backward(const Tensor& g) override {
    const Variable& x = inputs[0];
    if (!x.requires_grad()) return;
    const Device device = g.device();
    const std::vector<float> grad_out = g.to_host_vector();
    const std::vector<int64_t> off = offsets.to_host_vector();
    const int64_t c = g.cols(), b_count = g.rows();
    std::vector<float> grad_x(static_cast<size_t>(x.rows() * c), 0.0f);
    if (has_arg(op)) {
      const std::vector<int64_t> winner = arg.to_host_vector();
      for (int64_t i = 0; i < b_count * c; ++i) {
        if (winner[static_cast<size_t>(i)] >= 0)
          grad_x[static_cast<size_t>(winner[static_cast<size_t>(i)] * c + i % c)] += grad_out[static_cast<size_t>(i)];
      }
    } else {
      for (int64_t b = 0; b < b_count; ++b) {
        const int64_t n = off[b + 1] - off[b];
        const float scale = op == ReduceOp::Mean && n > 0 ? 1.0f / static_cast<float>(n) : 1.0f;
        const float* row = grad_out.data() + b * c;
        for (int64_t r = off[b]; r < off[b + 1]; ++r) {
          float* dst = grad_x.data() + r * c;
          for (int64_t k = 0; k < c; ++k) dst[k] = row[k] * scale;
        }
      }
    }
    inputs[0].accumulate_grad(Tensor::from_host(grad_x, x.rows(), c, device));
  }
};

}  // namespace

Variable global_pool(const Variable& x, const IndexTensor& graph_offsets, ReduceOp op) {
  EW_REQUIRE(x.defined(), "global_pool: x is undefined");
  EW_REQUIRE(graph_offsets.cols() == 1 && graph_offsets.rows() >= 1, "global_pool: graph_offsets ",
             graph_offsets.shape_str(), " must be [B + 1, 1]");
  EW_REQUIRE(graph_offsets.device() == x.device(), "global_pool: graph_offsets on ", graph_offsets.device().str(),
             ", x on ", x.device().str());
  const int64_t b_count = graph_offsets.rows() - 1;
  Tensor out(b_count, x.cols(), x.device());
  IndexTensor arg;
  if (has_arg(op)) arg = IndexTensor(b_count, x.cols(), x.device());
  // segment_reduce checks the offsets (start 0, nondecreasing, end N) and names them.
  segment_reduce<float>(x.value().cview(), graph_offsets.cflat(), op, out.view(),
                        has_arg(op) ? arg.view() : MatrixView<int64_t>{});
  auto node = std::make_shared<GlobalPoolNode>();
  node->inputs = {x};
  node->offsets = graph_offsets;
  node->arg = arg;
  node->op = op;
  return record(std::move(out), std::move(node));
}

}  // namespace edgewise::gnn
