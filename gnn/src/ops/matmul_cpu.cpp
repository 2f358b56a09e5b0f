// Dense matrix products on the CPU through Eigen (row-major maps, no copies).
#include <Eigen/Core>

#include "ops/ops_backends.hpp"

namespace edgewise::gnn::ops::cpu {

namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMajor>;
using Map = Eigen::Map<RowMajor>;
}  // namespace

void matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c, float alpha, float beta) {
  ConstMap am(a.data(), a.rows(), a.cols());
  ConstMap bm(b.data(), b.rows(), b.cols());
  Map cm(c.data(), c.rows(), c.cols());
  if (c.numel() == 0) return;
  if (beta == 0.0f) {
    cm.setZero();  // beta == 0 ignores c's old contents, NaN included (BLAS semantics)
  } else if (beta != 1.0f) {
    cm *= beta;
  }
  if (a.cols() * a.rows() == 0 || b.numel() == 0) return;
  if (!ta && !tb) cm.noalias() += alpha * (am * bm);
  if (ta && !tb) cm.noalias() += alpha * (am.transpose() * bm);
  if (!ta && tb) cm.noalias() += alpha * (am * bm.transpose());
  if (ta && tb) cm.noalias() += alpha * (am.transpose() * bm.transpose());
}

}  // namespace edgewise::gnn::ops::cpu
