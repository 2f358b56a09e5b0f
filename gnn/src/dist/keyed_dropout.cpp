// Dropout whose mask is keyed by global element ids: the Philox draw of the
// single-process mask (ops/dropout_core.hpp), looked up per element.
#include <algorithm>

#include "edgewise/gnn/dist/halo_exchange.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/gnn/tensor/dropout_core.hpp"
#if EDGEWISE_WITH_CUDA
#include "keyed_dropout_backend.hpp"
#endif

namespace edgewise::gnn::dist {

namespace {

// Elements in[0, n) with the consecutive keys base, base + 1, ...: element key k is
// lane k & 3 of Philox block k >> 2 (DropoutMask::keep). Up to kBlocks blocks are
// computed side by side so the CPU runs them in vector lanes, as ops::dropout does.
void apply_run(const ops::DropoutMask& mask, uint64_t seed, uint64_t stream, uint64_t base, const float* in,
               float* out, int64_t n) {
  constexpr int64_t kBlocks = 16;
  uint32_t bits[4 * kBlocks];
  while (n > 0) {
    const uint64_t first_block = base >> 2;
    const int64_t take = std::min<int64_t>(n, 4 * kBlocks - static_cast<int64_t>(base & 3));
    const int64_t blocks = static_cast<int64_t>(((base + static_cast<uint64_t>(take) - 1) >> 2) - first_block) + 1;
#pragma omp simd
    for (int64_t b = 0; b < blocks; ++b) {
      const PhiloxBlock block = philox_block(seed, stream, first_block + static_cast<uint64_t>(b));
      for (int j = 0; j < 4; ++j) bits[4 * b + j] = block.v[j];
    }
    const int64_t lane0 = static_cast<int64_t>(base & 3);
    for (int64_t i = 0; i < take; ++i) out[i] = mask.select(bits[lane0 + i], in[i]);
    base += static_cast<uint64_t>(take);
    in += take;
    out += take;
    n -= take;
  }
}

// y[r, c] = mask(key_base[r] + c) applied to x[r, c] (x, y: [R, C], key_base [R]).
void apply_keyed(float p, uint64_t seed, uint64_t stream, const Tensor& x, const IndexTensor& key_base, Tensor& y) {
  const int64_t rows = x.rows(), cols = x.cols();
  if (x.device().is_cuda()) {
#if EDGEWISE_WITH_CUDA
    keyed_dropout_cuda(x.data(), y.data(), key_base.data(), rows, cols, p, seed, stream);
    return;
#else
    detail::throw_invalid_argument("keyed_dropout: built without CUDA");
#endif
  }
  const ops::DropoutMask mask(p, seed, stream);
  const float* in = x.data();
  const int64_t* keys = key_base.data();
  float* out = y.data();
  if (cols > 1) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r)
      apply_run(mask, seed, stream, static_cast<uint64_t>(keys[r]), in + r * cols, out + r * cols, cols);
    return;
  }
  // One key per element (sparse values): runs of consecutive keys (a CSR row's
  // values) go together; chunks of elements are split among the threads.
  constexpr int64_t kChunk = 4096;
#pragma omp parallel for schedule(static)
  for (int64_t c0 = 0; c0 < rows; c0 += kChunk) {
    const int64_t c1 = std::min(rows, c0 + kChunk);
    for (int64_t i = c0; i < c1;) {
      int64_t j = i + 1;
      while (j < c1 && keys[j] == keys[j - 1] + 1) ++j;
      apply_run(mask, seed, stream, static_cast<uint64_t>(keys[i]), in + i, out + i, j - i);
      i = j;
    }
  }
}

struct KeyedDropoutNode : Node {
  float p = 0;
  uint64_t seed = 0, stream = 0;
  IndexTensor key_base;  // shares the caller's storage
  const char* name() const override { return "keyed_dropout"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    apply_keyed(p, seed, stream, g, key_base, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

void check_keys(const char* op, int64_t rows, Device device, const IndexTensor& keys) {
  EW_REQUIRE(keys.numel() == rows, op, ": ", keys.numel(), " keys for ", rows, " rows");
  EW_REQUIRE(keys.device() == device, op, ": the keys are on ", keys.device().str(), ", x on ", device.str());
}

}  // namespace

Variable keyed_dropout(const Variable& x, float p, bool training, Generator& generator, const IndexTensor& key_base) {
  if (!training || p == 0.0f) return x;
  check_keys("keyed_dropout", x.rows(), x.device(), key_base);
  const uint64_t stream = generator.next_stream();
  Tensor y(x.rows(), x.cols(), x.device());
  apply_keyed(p, generator.seed(), stream, x.value(), key_base, y);
  auto node = std::make_shared<KeyedDropoutNode>();
  node->inputs = {x};
  node->p = p;
  node->seed = generator.seed();
  node->stream = stream;
  node->key_base = key_base;
  return record(y, node);
}

SparseTensor keyed_sparse_dropout(const SparseTensor& x, float p, bool training, Generator& generator,
                                  const IndexTensor& value_keys) {
  if (!training || p == 0.0f) return x;
  check_keys("keyed_sparse_dropout", x.nnz(), x.device(), value_keys);
  Tensor dropped(x.nnz(), 1, x.device());
  apply_keyed(p, generator.seed(), generator.next_stream(), x.values(), value_keys, dropped);
  return x.with_values(dropped);
}

IndexTensor sparse_value_keys(const SparseTensor& x, const std::vector<int64_t>& value_base, Device device) {
  EW_REQUIRE(static_cast<int64_t>(value_base.size()) == x.rows(), "sparse_value_keys: ", value_base.size(),
             " value bases for ", x.rows(), " rows");
  const std::vector<int64_t> offsets = x.offsets().to_host_vector();
  std::vector<int64_t> keys(static_cast<size_t>(x.nnz()));
  for (int64_t r = 0; r < x.rows(); ++r)
    for (int64_t k = offsets[static_cast<size_t>(r)]; k < offsets[static_cast<size_t>(r) + 1]; ++k)
      keys[static_cast<size_t>(k)] = value_base[static_cast<size_t>(r)] + (k - offsets[static_cast<size_t>(r)]);
  return IndexTensor::vector(keys, device);
}

}  // namespace edgewise::gnn::dist
