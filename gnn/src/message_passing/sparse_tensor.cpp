// Sparse input features: CSR on a device, its cached transpose, X W and sparse dropout.
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

#include <utility>

#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "edgewise/kernels/spmm.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

SparseTensor SparseTensor::from_csr(const CsrMatrix& csr, Device device) {
  csr.validate("SparseTensor");
  auto s = std::make_shared<Structure>();
  s->rows = csr.rows;
  s->cols = csr.cols;
  s->nnz = csr.nnz();
  s->offsets = upload(std::span<const int64_t>(csr.offsets), device);
  s->indices = upload(std::span<const int32_t>(csr.indices), device);
  SparseTensor t;
  t.impl_ = s;
  t.values_ = Tensor::from_host(csr.values, csr.nnz(), 1, device);
  return t;
}

const TransposedCsr& SparseTensor::transposed() const {
  std::call_once(impl_->transposed_once, [this] {
    const int64_t nnz = impl_->nnz;
    const Device d = impl_->offsets.device();
    const std::vector<int64_t> offsets = host_vector(impl_->offsets.data(), impl_->rows + 1, d);
    const std::vector<int32_t> columns = host_vector(impl_->indices.data(), nnz, d);
    std::vector<int32_t> sorted_columns(static_cast<size_t>(nnz));
    std::vector<int64_t> position(static_cast<size_t>(nnz));
    Context ctx;
    ctx.validate = false;  // validated at construction
    sort_by_key<int32_t>(VectorView<const int32_t>(columns.data(), nnz),
                         VectorView<int32_t>(sorted_columns.data(), nnz), VectorView<int64_t>(position.data(), nnz),
                         ctx);
    std::vector<int64_t> col_offsets(static_cast<size_t>(impl_->cols + 1));
    offsets_from_keys<int32_t>(VectorView<const int32_t>(sorted_columns.data(), nnz),
                               VectorView<int64_t>(col_offsets.data(), impl_->cols + 1), ctx);
    // Row of each CSR entry, then of each transposed entry.
    std::vector<int32_t> row_of(static_cast<size_t>(nnz));
    for (int64_t r = 0; r < impl_->rows; ++r) {
      for (int64_t k = offsets[r]; k < offsets[r + 1]; ++k) row_of[k] = static_cast<int32_t>(r);
    }
    std::vector<int32_t> t_rows(static_cast<size_t>(nnz));
    for (int64_t t = 0; t < nnz; ++t) t_rows[t] = row_of[position[t]];
    auto tr = std::make_unique<TransposedCsr>();
    tr->offsets = upload(std::span<const int64_t>(col_offsets), d);
    tr->destinations = upload(std::span<const int32_t>(t_rows), d);
    tr->edge_ids = upload(std::span<const int64_t>(position), d);
    impl_->transposed = std::move(tr);
  });
  return *impl_->transposed;
}

SparseTensor SparseTensor::with_values(const Tensor& values) const {
  EW_REQUIRE(values.numel() == nnz(), "SparseTensor::with_values: ", values.numel(), " values for ", nnz(),
             " entries");
  SparseTensor t = *this;
  t.values_ = values.reshape(nnz(), 1);
  return t;
}

SparseTensor SparseTensor::to(Device device) const {
  if (device == this->device()) return *this;
  return from_csr(to_csr(), device);
}

CsrMatrix SparseTensor::to_csr() const {
  CsrMatrix m;
  m.rows = rows();
  m.cols = cols();
  m.offsets = host_vector(impl_->offsets.data(), impl_->offsets.size(), device());
  m.indices = host_vector(impl_->indices.data(), impl_->indices.size(), device());
  m.values = values_.to_host_vector();
  return m;
}

namespace {
struct SparseMatmulNode : Node {
  SparseTensor x;
  const char* name() const override { return "sparse_matmul"; }
  void backward(const Tensor& g) override {
    // dL/dw = x^T g: a gather over x's columns (the transposed CSR).
    const TransposedCsr& t = x.transposed();
    Tensor grad_w(x.cols(), g.cols(), g.device());
    spmm_backward<float, int32_t>(t.offsets.view(), t.destinations.view(), t.edge_ids.view(), x.values().cflat(),
                                  g.cview(), ReduceOp::Sum, x.offsets().view(), grad_w.view(),
                                  engine_context(g.device()));
    inputs[0].accumulate_grad(std::move(grad_w));
  }
};
}  // namespace

Variable sparse_matmul(const SparseTensor& x, const Variable& w) {
  EW_REQUIRE(w.rows() == x.cols(), "sparse_matmul: w has ", w.rows(), " rows for ", x.cols(), " feature columns");
  EW_REQUIRE(w.device() == x.device(), "sparse_matmul: w is on ", w.device().str(), " but x is on ",
             x.device().str());
  Tensor out(x.rows(), w.cols(), w.device());
  spmm<float, int32_t>(x.offsets().view(), x.indices().view(), x.values().cflat(), w.value().cview(), ReduceOp::Sum,
                       out.view(), {}, engine_context(w.device()));
  auto node = std::make_shared<SparseMatmulNode>();
  node->inputs = {w};
  node->x = x;
  return record(out, node);
}

SparseTensor sparse_dropout(const SparseTensor& x, float p, bool training, Generator& generator) {
  if (!training || p == 0.0f) return x;
  Tensor dropped(x.nnz(), 1, x.device());
  ops::dropout(x.values(), p, generator.seed(), generator.next_stream(), dropped);
  return x.with_values(dropped);
}

NodeFeatures NodeFeatures::to(Device device) const {
  NodeFeatures f;
  if (is_sparse()) {
    f.sparse = sparse.to(device);
  } else {
    f.dense = dense.to(device);
  }
  return f;
}

}  // namespace edgewise::gnn
