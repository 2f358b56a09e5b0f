// Dataset -> TrainData: feature normalisation and format, graph construction, transfers.
#include <algorithm>

#include "edgewise/gnn/train/trainer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// PyG's NormalizeFeatures: every row divided by max(row sum, 1).
void normalize_rows(Features& f) {
  if (f.is_sparse()) {
    CsrMatrix& m = f.csr;
#pragma omp parallel for
    for (int64_t r = 0; r < m.rows; ++r) {
      double sum = 0;
      for (int64_t k = m.offsets[r]; k < m.offsets[r + 1]; ++k) sum += m.values[k];
      const float scale = static_cast<float>(1.0 / std::max(sum, 1.0));
      for (int64_t k = m.offsets[r]; k < m.offsets[r + 1]; ++k) m.values[k] *= scale;
    }
  } else {
#pragma omp parallel for
    for (int64_t r = 0; r < f.rows; ++r) {
      float* row = f.dense.data() + r * f.cols;
      double sum = 0;
      for (int64_t c = 0; c < f.cols; ++c) sum += row[c];
      const float scale = static_cast<float>(1.0 / std::max(sum, 1.0));
      for (int64_t c = 0; c < f.cols; ++c) row[c] *= scale;
    }
  }
}

}  // namespace

TrainData prepare(const Dataset& dataset, Device device, const PrepareOptions& options) {
  require_available(device, "prepare");
  dataset.validate();
  EW_REQUIRE(dataset.features.cols > 0, "prepare: dataset '", dataset.name, "' has no node features");
  EW_REQUIRE(dataset.num_classes > 0 || !options.require_labels, "prepare: dataset '", dataset.name,
             "' has no labels (node classification needs them; link prediction does not)");
  Features features = dataset.features;
  const FeatureFormat format =
      options.features == FeatureFormat::Auto
          ? (features.density() <= options.sparse_threshold ? FeatureFormat::Sparse : FeatureFormat::Dense)
          : options.features;
  if (format == FeatureFormat::Sparse) {
    features.to_sparse();
  } else {
    features.to_dense();
  }
  if (options.normalize_features) normalize_rows(features);

  TrainData data;
  data.name = dataset.name;
  data.num_classes = dataset.num_classes;
  const auto src = dataset.src();
  const auto dst = dataset.dst();
  // Edge weights (an edge list's third column) weight the aggregation: GCN's
  // normalisation uses them as PyG's gcn_norm does with edge_weight.
  data.graph = Graph::from_coo(std::vector<int64_t>(src.begin(), src.end()), std::vector<int64_t>(dst.begin(), dst.end()),
                               dataset.num_nodes, dataset.edge_weight)
                   .to(device);
  if (features.is_sparse()) {
    data.features.sparse = SparseTensor::from_csr(features.csr, device);
  } else {
    data.features.dense = Tensor::from_host(features.dense, features.rows, features.cols, device);
  }
  data.labels = IndexTensor::vector(dataset.labels, device);
  data.train_idx = IndexTensor::vector(dataset.train_idx, device);
  data.valid_idx = IndexTensor::vector(dataset.valid_idx, device);
  data.test_idx = IndexTensor::vector(dataset.test_idx, device);
  return data;
}

}  // namespace edgewise::gnn
