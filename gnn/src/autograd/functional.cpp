// Differentiable dense ops: forward with ops::, backward recorded as a Node.
#include "edgewise/gnn/autograd/functional.hpp"

#include <utility>

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

template <class N, class... Inputs>
std::shared_ptr<N> make_node(const Inputs&... inputs) {
  auto node = std::make_shared<N>();
  node->inputs = {inputs...};
  return node;
}

struct MatmulNode : Node {
  const char* name() const override { return "matmul"; }
  void backward(const Tensor& g) override {
    const Variable& a = inputs[0];
    const Variable& b = inputs[1];
    if (a.requires_grad()) inputs[0].accumulate_grad(ops::matmul(g, b.value(), false, /*transpose_b=*/true));
    if (b.requires_grad()) inputs[1].accumulate_grad(ops::matmul(a.value(), g, /*transpose_a=*/true, false));
  }
};

struct AddBiasNode : Node {
  const char* name() const override { return "add_bias"; }
  void backward(const Tensor& g) override { backward_owned(Tensor(g)); }
  void backward_owned(Tensor&& g) override {
    if (inputs[1].requires_grad()) {
      Tensor gb(1, g.cols(), g.device());
      ops::column_sums(g, gb);
      inputs[1].accumulate_grad(std::move(gb));
    }
    inputs[0].accumulate_grad(std::move(g));  // no copy when g is not shared
  }
};

struct AddNode : Node {
  const char* name() const override { return "add"; }
  void backward(const Tensor& g) override { backward_owned(Tensor(g)); }
  void backward_owned(Tensor&& g) override {
    inputs[0].accumulate_grad(g);
    inputs[1].accumulate_grad(std::move(g));
  }
};

struct ScaleByNode : Node {
  float factor = 1;
  const char* name() const override { return "scale_by"; }
  void backward(const Tensor& g) override {
    if (inputs[0].requires_grad()) {
      Tensor gx(g.rows(), g.cols(), g.device());
      ops::scale(g, factor, gx);
      inputs[0].accumulate_grad(std::move(gx));
    }
    if (inputs[1].requires_grad()) {
      Tensor prod(g.rows(), g.cols(), g.device());
      ops::multiply(g, inputs[0].value(), prod);
      Tensor ones = Tensor::full(prod.numel(), 1, 1.0f, g.device());
      Tensor gs(1, 1, g.device());
      ops::matmul(prod.reshape(1, prod.numel()), false, ones, false, gs);
      inputs[1].accumulate_grad(std::move(gs));
    }
  }
};

struct ReluNode : Node {
  Tensor output;
  const char* name() const override { return "relu"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    ops::relu_backward(output, g, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

struct DropoutNode : Node {
  float p = 0;
  uint64_t seed = 0, stream = 0;
  const char* name() const override { return "dropout"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    ops::dropout_backward(g, p, seed, stream, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

struct LogSoftmaxNode : Node {
  Tensor output;
  const char* name() const override { return "log_softmax"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    ops::log_softmax_backward(output, g, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

// Loss nodes keep d loss / d input from the forward pass and scale it by the
// incoming scalar gradient.
struct LossNode : Node {
  Tensor input_grad;
  const char* label = "loss";
  const char* name() const override { return label; }
  void backward(const Tensor& g) override {
    const float scale = g.to_host_vector()[0];
    Tensor gx(input_grad.rows(), input_grad.cols(), input_grad.device());
    ops::scale(input_grad, scale, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

struct ConcatNode : Node {
  const char* name() const override { return "concat_cols"; }
  void backward(const Tensor& g) override {
    Tensor ga(inputs[0].rows(), inputs[0].cols(), g.device());
    Tensor gb(inputs[1].rows(), inputs[1].cols(), g.device());
    ops::split_cols(g, ga, gb);
    inputs[0].accumulate_grad(std::move(ga));
    inputs[1].accumulate_grad(std::move(gb));
  }
};

struct L2NormalizeNode : Node {
  Tensor output, norms;
  float eps = 0;
  const char* name() const override { return "l2_normalize"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    ops::l2_normalize_backward(output, norms, eps, g, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  return record(ops::matmul(a.value(), b.value()), make_node<MatmulNode>(a, b));
}

Variable add_bias(const Variable& x, const Variable& bias) {
  Tensor y(x.rows(), x.cols(), x.device());
  ops::add_row_vector(x.value(), bias.value(), y);
  return record(y, make_node<AddBiasNode>(x, bias));
}

Variable add(const Variable& a, const Variable& b) {
  Tensor y = a.value().clone();
  ops::axpby(1.0f, b.value(), 1.0f, y);
  return record(y, make_node<AddNode>(a, b));
}

Variable scale_by(const Variable& x, const Variable& s, float offset) {
  EW_REQUIRE(s.rows() == 1 && s.cols() == 1, "scale_by: s ", s.value().shape_str(), " must be a [1, 1] scalar");
  const float factor = offset + s.value().to_host_vector()[0];
  Tensor y(x.rows(), x.cols(), x.device());
  ops::scale(x.value(), factor, y);
  auto node = make_node<ScaleByNode>(x, s);
  node->factor = factor;
  return record(y, node);
}

Variable relu(const Variable& x) {
  Tensor y(x.rows(), x.cols(), x.device());
  ops::relu(x.value(), y);
  auto node = make_node<ReluNode>(x);
  node->output = y;
  return record(y, node);
}

Variable dropout(const Variable& x, float p, bool training, Generator& generator) {
  if (!training || p == 0.0f) return x;
  const uint64_t stream = generator.next_stream();
  Tensor y(x.rows(), x.cols(), x.device());
  ops::dropout(x.value(), p, generator.seed(), stream, y);
  auto node = make_node<DropoutNode>(x);
  node->p = p;
  node->seed = generator.seed();
  node->stream = stream;
  return record(y, node);
}

Variable log_softmax(const Variable& x) {
  Tensor y(x.rows(), x.cols(), x.device());
  ops::log_softmax_rows(x.value(), y);
  auto node = make_node<LogSoftmaxNode>(x);
  node->output = y;
  return record(y, node);
}

Variable nll_loss(const Variable& logp, const IndexTensor& labels, const IndexTensor& rows) {
  const bool need_grad = grad_enabled() && logp.requires_grad();
  Tensor grad;
  if (need_grad) grad = Tensor(logp.rows(), logp.cols(), logp.device());
  const float loss = ops::nll_loss(logp.value(), labels, rows, need_grad ? &grad : nullptr);
  auto node = make_node<LossNode>(logp);
  node->input_grad = grad;
  node->label = "nll_loss";
  return record(Tensor::full(1, 1, loss, logp.device()), node);
}

Variable cross_entropy(const Variable& logits, const IndexTensor& labels, const IndexTensor& rows) {
  return nll_loss(log_softmax(logits), labels, rows);
}

Variable bce_with_logits(const Variable& logits, const Tensor& targets, const IndexTensor& rows) {
  const bool need_grad = grad_enabled() && logits.requires_grad();
  Tensor grad;
  if (need_grad) grad = Tensor(logits.rows(), logits.cols(), logits.device());
  const float loss = ops::bce_with_logits(logits.value(), targets, rows, need_grad ? &grad : nullptr);
  auto node = make_node<LossNode>(logits);
  node->input_grad = grad;
  node->label = "bce_with_logits";
  return record(Tensor::full(1, 1, loss, logits.device()), node);
}

Variable concat_cols(const Variable& a, const Variable& b) {
  Tensor y(a.rows(), a.cols() + b.cols(), a.device());
  ops::concat_cols(a.value(), b.value(), y);
  return record(y, make_node<ConcatNode>(a, b));
}

Variable l2_normalize(const Variable& x, float eps) {
  Tensor y(x.rows(), x.cols(), x.device());
  Tensor norms(x.rows(), 1, x.device());
  ops::l2_normalize_rows(x.value(), eps, y, norms);
  auto node = make_node<L2NormalizeNode>(x);
  node->output = y;
  node->norms = norms;
  node->eps = eps;
  return record(y, node);
}

}  // namespace edgewise::gnn
