// Dropout whose mask is keyed by global element ids: the Philox draw of the
// single-process mask (ops/dropout_core.hpp), looked up per element.
#include "edgewise/gnn/dist/halo_exchange.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "ops/dropout_core.hpp"

namespace edgewise::gnn::dist {

namespace {

// y[r, c] = mask(key_base[r] + c) applied to x[r, c] (x, y: [R, C] host).
void apply_keyed(const ops::DropoutMask& mask, const Tensor& x, const std::vector<int64_t>& key_base, Tensor& y) {
  const int64_t rows = x.rows(), cols = x.cols();
  const float* in = x.data();
  float* out = y.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = key_base[static_cast<size_t>(r)];
    for (int64_t c = 0; c < cols; ++c) out[r * cols + c] = mask.apply(in[r * cols + c], base + c);
  }
}

struct KeyedDropoutNode : Node {
  float p = 0;
  uint64_t seed = 0, stream = 0;
  const std::vector<int64_t>* key_base = nullptr;  // owned by the model, which outlives its tape
  const char* name() const override { return "keyed_dropout"; }
  void backward(const Tensor& g) override {
    Tensor gx(g.rows(), g.cols(), g.device());
    apply_keyed(ops::DropoutMask(p, seed, stream), g, *key_base, gx);
    inputs[0].accumulate_grad(std::move(gx));
  }
};

}  // namespace

Variable keyed_dropout(const Variable& x, float p, bool training, Generator& generator,
                       const std::vector<int64_t>& key_base) {
  if (!training || p == 0.0f) return x;
  EW_REQUIRE(x.device().is_cpu(), "keyed_dropout: x must be on the CPU (got ", x.device().str(), ")");
  EW_REQUIRE(static_cast<int64_t>(key_base.size()) == x.rows(), "keyed_dropout: ", key_base.size(),
             " keys for ", x.rows(), " rows");
  const uint64_t stream = generator.next_stream();
  Tensor y(x.rows(), x.cols(), x.device());
  apply_keyed(ops::DropoutMask(p, generator.seed(), stream), x.value(), key_base, y);
  auto node = std::make_shared<KeyedDropoutNode>();
  node->inputs = {x};
  node->p = p;
  node->seed = generator.seed();
  node->stream = stream;
  node->key_base = &key_base;
  return record(y, node);
}

SparseTensor keyed_sparse_dropout(const SparseTensor& x, float p, bool training, Generator& generator,
                                  const std::vector<int64_t>& value_base) {
  if (!training || p == 0.0f) return x;
  EW_REQUIRE(x.device().is_cpu(), "keyed_sparse_dropout: x must be on the CPU (got ", x.device().str(), ")");
  EW_REQUIRE(static_cast<int64_t>(value_base.size()) == x.rows(), "keyed_sparse_dropout: ", value_base.size(),
             " value bases for ", x.rows(), " rows");
  const ops::DropoutMask mask(p, generator.seed(), generator.next_stream());
  const std::vector<int64_t> offsets = x.offsets().to_host_vector();
  const float* in = x.values().data();
  Tensor dropped(x.nnz(), 1, x.device());
  float* out = dropped.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < x.rows(); ++r) {
    const int64_t first = offsets[static_cast<size_t>(r)];
    for (int64_t k = first; k < offsets[static_cast<size_t>(r) + 1]; ++k)
      out[k] = mask.apply(in[k], value_base[static_cast<size_t>(r)] + (k - first));
  }
  return x.with_values(dropped);
}

}  // namespace edgewise::gnn::dist
