// Dense matrix products on the CPU: the GEMM copy for the running CPU's ISA level.
#include "tensor/isa_ops_cpu.hpp"
#include "tensor/ops_backends.hpp"

namespace edgewise::gnn::ops::cpu {

void matmul(const Tensor& a, bool ta, const Tensor& b, bool tb, Tensor& c, float alpha, float beta) {
  const GemmArgs args{a.data(), a.rows(), a.cols(), ta,    b.data(), b.rows(), b.cols(), tb,
                      c.data(), c.rows(), c.cols(), alpha, beta};
  EW_DISPATCH_CPU_ISA(gemm, args);
}

}  // namespace edgewise::gnn::ops::cpu
