// Differentiable dense ops on Variables (each records its backward on the tape).
// Graph aggregation lives in aggregate.hpp, sparse-feature products in sparse_features.hpp.
#pragma once

#include <cstdint>

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/tensor/random.hpp"

namespace edgewise::gnn {

// a [M, K] @ b [K, N] (Eigen on CPU, cuBLAS on CUDA).
Variable matmul(const Variable& a, const Variable& b);
// x [N, C] + bias [1, C] broadcast over rows.
Variable add_bias(const Variable& x, const Variable& bias);
Variable add(const Variable& a, const Variable& b);
// (offset + s) * x with s a learnable [1, 1] scalar (GIN's 1 + eps).
Variable scale_by(const Variable& x, const Variable& s, float offset);
Variable relu(const Variable& x);
// Inverted dropout (identity when !training or p == 0); the mask comes from
// `generator`, so a seeded run is reproducible on every device.
Variable dropout(const Variable& x, float p, bool training, Generator& generator);
Variable log_softmax(const Variable& x);
// Mean NLL over `rows` (log-probabilities in, scalar [1, 1] out).
Variable nll_loss(const Variable& logp, const IndexTensor& labels, const IndexTensor& rows);
// log_softmax + nll_loss.
Variable cross_entropy(const Variable& logits, const IndexTensor& labels, const IndexTensor& rows);
// Mean BCE-with-logits over `rows` and all columns (multi-label targets in {0, 1}).
Variable bce_with_logits(const Variable& logits, const Tensor& targets, const IndexTensor& rows);
// [a | b] along columns.
Variable concat_cols(const Variable& a, const Variable& b);
// Row-wise L2 normalisation, x / max(||x||, eps).
Variable l2_normalize(const Variable& x, float eps = 1e-12f);

}  // namespace edgewise::gnn
