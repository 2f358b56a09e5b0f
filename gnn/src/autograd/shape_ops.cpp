// Shape ops with their backward on the tape: row slices, padding and concatenation as
// byte copies on the engine's stream, reshape without a copy, block diagonals via the host.
#include "edgewise/gnn/autograd/shape_ops.hpp"

#include <utility>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

namespace {

// Copies `rows` rows from src (starting at row src_row) to dst (starting at dst_row).
void copy_rows(Tensor& dst, int64_t dst_row, const Tensor& src, int64_t src_row, int64_t rows) {
  if (rows == 0 || src.cols() == 0) return;
  const std::size_t row_bytes = static_cast<std::size_t>(src.cols()) * sizeof(float);
  copy_bytes(dst.data() + dst_row * dst.cols(), dst.device(), src.data() + src_row * src.cols(), src.device(),
             static_cast<std::size_t>(rows) * row_bytes, engine_stream(dst.device(), src.device()));
}

// A zero [rows, C] tensor holding src in its rows from `at` on.
Tensor placed_in_zeros(const Tensor& src, int64_t rows, int64_t at) {
  Tensor out = Tensor::zeros(rows, src.cols(), src.device());
  copy_rows(out, at, src, 0, src.rows());
  return out;
}

struct SliceRowsNode : Node {
  int64_t begin = 0, input_rows = 0;
  const char* name() const override { return "slice_rows"; }
  void backward(const Tensor& g) override { inputs[0].accumulate_grad(placed_in_zeros(g, input_rows, begin)); }
};

struct PadRowsNode : Node {
  const char* name() const override { return "pad_rows"; }
  void backward(const Tensor& g) override {
    Tensor gx(inputs[0].rows(), g.cols(), g.device());
    copy_rows(gx, 0, g, 0, gx.rows());
    inputs[0].accumulate_grad(std::move(gx));
  }
};

struct ConcatRowsNode : Node {
  const char* name() const override { return "concat_rows"; }
  void backward(const Tensor& g) override {
    int64_t at = 0;
    for (Variable& part : inputs) {
      if (part.requires_grad()) {
        Tensor gp(part.rows(), g.cols(), g.device());
        copy_rows(gp, 0, g, at, gp.rows());
        part.accumulate_grad(std::move(gp));
      }
      at += part.rows();
    }
  }
};

struct ReshapeNode : Node {
  const char* name() const override { return "reshape"; }
  void backward(const Tensor& g) override { inputs[0].accumulate_grad(g.reshape(inputs[0].rows(), inputs[0].cols())); }
};

// Host loops over [B*I, O] blocks and their [B*I, B*O] diagonal placement.
std::vector<float> place_on_diagonal(const std::vector<float>& blocks, int64_t rows, int64_t block_cols,
                                     int64_t num_blocks) {
  const int64_t block_rows = rows / num_blocks, cols = block_cols * num_blocks;
  std::vector<float> out(static_cast<size_t>(rows * cols), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / block_rows;
    for (int64_t c = 0; c < block_cols; ++c) out[r * cols + b * block_cols + c] = blocks[r * block_cols + c];
  }
  return out;
}

std::vector<float> read_diagonal(const std::vector<float>& full, int64_t rows, int64_t block_cols, int64_t num_blocks) {
  const int64_t block_rows = rows / num_blocks, cols = block_cols * num_blocks;
  std::vector<float> out(static_cast<size_t>(rows * block_cols));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / block_rows;
    for (int64_t c = 0; c < block_cols; ++c) out[r * block_cols + c] = full[r * cols + b * block_cols + c];
  }
  return out;
}

struct BlockDiagonalNode : Node {
  int64_t num_blocks = 1;
  const char* name() const override { return "block_diagonal"; }
  void backward(const Tensor& g) override {
    const Variable& blocks = inputs[0];
    std::vector<float> gb = read_diagonal(g.to_host_vector(), blocks.rows(), blocks.cols(), num_blocks);
    inputs[0].accumulate_grad(Tensor::from_host(gb, blocks.rows(), blocks.cols(), g.device()));
  }
};

}  // namespace

Variable slice_rows(const Variable& x, int64_t begin, int64_t count) {
  EW_REQUIRE(begin >= 0 && count >= 0 && begin + count <= x.rows(), "slice_rows: rows [", begin, ", ", begin + count,
             ") must lie within x's ", x.rows(), " rows");
  if (begin == 0 && count == x.rows()) return x;
  Tensor out(count, x.cols(), x.device());
  copy_rows(out, 0, x.value(), begin, count);
  auto node = std::make_shared<SliceRowsNode>();
  node->inputs = {x};
  node->begin = begin;
  node->input_rows = x.rows();
  return record(std::move(out), node);
}

Variable pad_rows(const Variable& x, int64_t rows) {
  EW_REQUIRE(rows >= x.rows(), "pad_rows: rows (", rows, ") must be at least x's row count (", x.rows(), ")");
  if (rows == x.rows()) return x;
  auto node = std::make_shared<PadRowsNode>();
  node->inputs = {x};
  return record(placed_in_zeros(x.value(), rows, 0), node);
}

Variable concat_rows(const std::vector<Variable>& parts) {
  EW_REQUIRE(!parts.empty(), "concat_rows: parts must not be empty");
  int64_t rows = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    EW_REQUIRE(parts[i].cols() == parts[0].cols(), "concat_rows: parts[", i, "] has ", parts[i].cols(),
               " columns, parts[0] has ", parts[0].cols());
    EW_REQUIRE(parts[i].device() == parts[0].device(), "concat_rows: parts[", i, "] is on another device than parts[0]");
    rows += parts[i].rows();
  }
  if (parts.size() == 1) return parts[0];
  Tensor out(rows, parts[0].cols(), parts[0].device());
  int64_t at = 0;
  for (const Variable& part : parts) {
    copy_rows(out, at, part.value(), 0, part.rows());
    at += part.rows();
  }
  auto node = std::make_shared<ConcatRowsNode>();
  node->inputs = parts;
  return record(std::move(out), node);
}

Variable reshape(const Variable& x, int64_t rows, int64_t cols) {
  EW_REQUIRE(rows >= 0 && cols >= 0 && rows * cols == x.rows() * x.cols(), "reshape: [", rows, ", ", cols,
             "] does not hold x's ", x.rows() * x.cols(), " elements (x is ", x.value().shape_str(), ")");
  if (rows == x.rows() && cols == x.cols()) return x;
  auto node = std::make_shared<ReshapeNode>();
  node->inputs = {x};
  return record(x.value().reshape(rows, cols), node);
}

Variable block_diagonal(const Variable& blocks, int64_t num_blocks) {
  EW_REQUIRE(num_blocks >= 1 && blocks.rows() % num_blocks == 0, "block_diagonal: num_blocks (", num_blocks,
             ") must be positive and divide blocks' row count (", blocks.rows(), ")");
  std::vector<float> full = place_on_diagonal(blocks.value().to_host_vector(), blocks.rows(), blocks.cols(), num_blocks);
  auto node = std::make_shared<BlockDiagonalNode>();
  node->inputs = {blocks};
  node->num_blocks = num_blocks;
  return record(Tensor::from_host(full, blocks.rows(), blocks.cols() * num_blocks, blocks.device()), node);
}

}  // namespace edgewise::gnn
