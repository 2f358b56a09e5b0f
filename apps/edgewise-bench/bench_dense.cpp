// Dense ops of a GCN epoch on a [1M, 64] activation: the GEMM forms a layer's
// forward and backward use (X @ W, X^T @ G for dW, G @ W^T for dX) at widths 64 and
// 16, and dropout. Both are compiled per ISA level (gnn/src/ops/isa_ops_cpu.hpp):
// EDGEWISE_CPU_ISA=baseline|avx2|avx512 times one level. GB/s counts each operand
// read once and the output written once.
#include "bench.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/tensor.hpp"

namespace edgewise::bench {
namespace {

using gnn::Tensor;

Tensor random_tensor(int64_t rows, int64_t cols, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> host(static_cast<size_t>(rows * cols));
  for (auto& v : host) v = d(rng);
  return Tensor::from_host(host, rows, cols);
}

// c = op(a) @ op(b) with a tall [rows, k] operand and a small [k, n] one.
enum class Form { XW, XtG, GWt };

Prepared prepare_gemm(Form form, int64_t rows, int64_t k, int64_t n, const Options& o) {
  struct State {
    Tensor a, b, c;
    bool ta = false, tb = false;
  };
  auto st = std::make_shared<State>();
  switch (form) {
    case Form::XW:  // [rows, k] @ [k, n]
      st->a = random_tensor(rows, k, o.seed), st->b = random_tensor(k, n, o.seed + 1), st->c = Tensor(rows, n);
      break;
    case Form::XtG:  // [rows, k]^T @ [rows, n]: a weight gradient
      st->a = random_tensor(rows, k, o.seed), st->b = random_tensor(rows, n, o.seed + 1), st->c = Tensor(k, n);
      st->ta = true;
      break;
    case Form::GWt:  // [rows, n] @ [k, n]^T: an input gradient
      st->a = random_tensor(rows, n, o.seed), st->b = random_tensor(k, n, o.seed + 1), st->c = Tensor(rows, k);
      st->tb = true;
      break;
  }
  Prepared p;
  p.run = [st] { gnn::ops::matmul(st->a, st->ta, st->b, st->tb, st->c, 1.0f, 0.0f); };
  p.bytes = static_cast<double>(st->a.bytes() + st->b.bytes() + st->c.bytes());
  p.detail = std::to_string(2.0 * static_cast<double>(rows) * k * n / 1e9) + " GFLOP";
  return p;
}

Prepared prepare_dropout(int64_t rows, int64_t cols, const Options& o) {
  struct State {
    Tensor x, y;
    uint64_t step = 0;
  };
  auto st = std::make_shared<State>();
  st->x = random_tensor(rows, cols, o.seed);
  st->y = Tensor(rows, cols);
  Prepared p;
  p.run = [st] { gnn::ops::dropout(st->x, 0.5f, 42, st->step++, st->y); };
  p.bytes = static_cast<double>(st->x.bytes() + st->y.bytes());
  return p;
}

EW_BENCH_CASES {
  constexpr int64_t kRows = 1'000'000;
  const Device cpu = Device::cpu();
  for (auto [k, n] : {std::pair<int64_t, int64_t>{64, 64}, {64, 16}}) {
    const std::string shape = "M=1M,K=" + std::to_string(k) + ",N=" + std::to_string(n);
    register_case({"matmul/x@w/" + shape, cpu, [=](const Options& o) { return prepare_gemm(Form::XW, kRows, k, n, o); }});
    register_case({"matmul/x^t@g/" + shape, cpu, [=](const Options& o) { return prepare_gemm(Form::XtG, kRows, k, n, o); }});
    register_case({"matmul/g@w^t/" + shape, cpu, [=](const Options& o) { return prepare_gemm(Form::GWt, kRows, k, n, o); }});
  }
  register_case({"dropout/p=0.5/1M x 64", cpu, [](const Options& o) { return prepare_dropout(kRows, 64, o); }});
}

}  // namespace
}  // namespace edgewise::bench
