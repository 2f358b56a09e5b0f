// SparseTensor: a sparse [rows, cols] float matrix in CSR on a device — sparse node
// features (Cora's are 98.7 % zeros). A layer's first product X W runs through the
// same spmm kernel as aggregation (Kipf's original GCN did the same), an order of
// magnitude less work than a dense X W; dL/dW = X^T g uses the transposed CSR,
// built once and cached. Sparse dropout acts on the stored values.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/data/csr_matrix.hpp"
#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/tensor/random.hpp"

namespace edgewise::gnn {

class SparseTensor {
 public:
  SparseTensor() = default;
  // Validates the CSR (csr.validate()) and copies it to `device`.
  static SparseTensor from_csr(const CsrMatrix& csr, Device device = Device::cpu());

  bool defined() const noexcept { return impl_ != nullptr; }
  int64_t rows() const { return impl_->rows; }
  int64_t cols() const { return impl_->cols; }
  int64_t nnz() const { return impl_->nnz; }
  Device device() const { return values_.device(); }
  const Buffer<int64_t>& offsets() const { return impl_->offsets; }  // [rows + 1]
  const Buffer<int32_t>& indices() const { return impl_->indices; }  // [nnz] column of each value
  const Tensor& values() const { return values_; }                   // [nnz, 1]
  // CSC of the same entries: columns' offsets, row ids, and each entry's CSR position.
  const TransposedCsr& transposed() const;

  // The same structure with other values ([nnz] in CSR order), e.g. after dropout.
  SparseTensor with_values(const Tensor& values) const;
  SparseTensor to(Device device) const;
  // Host copy.
  CsrMatrix to_csr() const;

 private:
  struct Structure {
    int64_t rows = 0, cols = 0, nnz = 0;
    Buffer<int64_t> offsets;
    Buffer<int32_t> indices;
    mutable std::once_flag transposed_once;
    mutable std::unique_ptr<TransposedCsr> transposed;
  };
  std::shared_ptr<const Structure> impl_;  // shared by with_values() copies
  Tensor values_;
};

// x W for a sparse x [N, F] and a dense parameter w [F, H] (spmm, op sum); dL/dw on backward.
Variable sparse_matmul(const SparseTensor& x, const Variable& w);
// Inverted dropout on the stored values (identity when !training or p == 0).
SparseTensor sparse_dropout(const SparseTensor& x, float p, bool training, Generator& generator);

// Node features as a layer input: dense [N, F] or sparse CSR.
struct NodeFeatures {
  Tensor dense;
  SparseTensor sparse;
  bool is_sparse() const { return sparse.defined(); }
  int64_t rows() const { return is_sparse() ? sparse.rows() : dense.rows(); }
  int64_t cols() const { return is_sparse() ? sparse.cols() : dense.cols(); }
  Device device() const { return is_sparse() ? sparse.device() : dense.device(); }
  NodeFeatures to(Device device) const;
};

}  // namespace edgewise::gnn
