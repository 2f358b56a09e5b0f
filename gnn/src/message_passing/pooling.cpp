// Global pooling: segment_reduce over graph offsets, with the kernels' own
// segment_reduce_backward on the tape (every op, on the tensors' device).
#include "edgewise/gnn/message_passing/pooling.hpp"

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/reduce_backward.hpp"
#include "edgewise/kernels/segment_reduce.hpp"

namespace edgewise::gnn {

namespace {

struct GlobalPoolNode : Node {
  IndexTensor offsets;  // [B + 1, 1]
  IndexTensor arg;      // [B, C], min/max only
  Tensor out;           // the forward's result: mul / var / std need it
  ReduceOp op = ReduceOp::Sum;
  const char* name() const override { return "global_pool"; }
  void backward(const Tensor& g) override {
    const Variable& x = inputs[0];
    if (!x.requires_grad()) return;
    Tensor grad_x(x.rows(), x.cols(), g.device());
    segment_reduce_backward<float>(x.value().cview(), offsets.cflat(), op, out.cview(),
                                   has_arg(op) ? arg.cview() : MatrixView<const int64_t>{}, g.cview(),
                                   grad_x.view(), engine_context(g.device()));
    inputs[0].accumulate_grad(std::move(grad_x));
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
  node->out = out;
  node->op = op;
  return record(std::move(out), std::move(node));
}

}  // namespace edgewise::gnn
