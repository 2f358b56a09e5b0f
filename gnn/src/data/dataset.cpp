// Dataset and Features: format conversion and contract validation.
#include "edgewise/gnn/data/dataset.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "data/finite_scan.hpp"
#include "data/nonzero_scan.hpp"
#include "data/parallel.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

FeatureFormat parse_feature_format(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (t == "auto") return FeatureFormat::Auto;
  if (t == "dense") return FeatureFormat::Dense;
  if (t == "sparse" || t == "csr") return FeatureFormat::Sparse;
  detail::throw_invalid_argument("feature format '", text, "' is not one of auto, dense, sparse");
}

const char* to_string(FeatureFormat format) {
  switch (format) {
    case FeatureFormat::Auto: return "auto";
    case FeatureFormat::Dense: return "dense";
    case FeatureFormat::Sparse: return "sparse";
  }
  return "?";
}

int64_t Features::nnz() const {
  if (is_sparse()) return csr.nnz();
  int64_t n = 0;
#pragma omp parallel for reduction(+ : n) schedule(static) if (rows * cols >= kMinParallelWork)
  for (int64_t r = 0; r < rows; ++r) n += count_nonzeros(dense.data() + r * cols, cols);
  return n;
}

double Features::density() const {
  const double total = static_cast<double>(rows) * static_cast<double>(cols);
  return total > 0 ? static_cast<double>(nnz()) / total : 0.0;
}

MatrixView<const float> Features::dense_view() const {
  EW_REQUIRE(!is_sparse(), "Features::dense_view: the features are sparse (call to_dense() first)");
  return {dense.data(), rows, cols};
}

void Features::to_dense() {
  if (!is_sparse()) return;
  dense = csr.to_dense();
  csr = CsrMatrix{};
  format = FeatureFormat::Dense;
}

void Features::to_sparse() {
  if (is_sparse()) return;
  csr = CsrMatrix::from_dense(dense_view());
  dense = {};
  format = FeatureFormat::Sparse;
}

namespace {

// Index i of `list` (named `what`) must be in [0, n), strictly above index i-1;
// marks each id in `owner` (0: no split yet) and rejects an id already owned.
void check_split(const Dataset& d, const std::vector<int64_t>& list, const char* what, uint8_t tag,
                 std::vector<uint8_t>& owner) {
  static const char* names[] = {"", "train_idx", "valid_idx", "test_idx"};
  for (size_t i = 0; i < list.size(); ++i) {
    const int64_t v = list[i];
    EW_REQUIRE(v >= 0 && v < d.num_nodes, "dataset '", d.name, "': ", what, "[", i, "] (", v, ") must lie in [0, ",
               d.num_nodes, ")");
    EW_REQUIRE(i == 0 || list[i - 1] < v, "dataset '", d.name, "': ", what, " must be strictly ascending, but ", what,
               "[", i - 1, "] (", list[i - 1], ") >= ", what, "[", i, "] (", v, ")");
    const uint8_t prev = owner[static_cast<size_t>(v)];
    EW_REQUIRE(prev == 0, "dataset '", d.name, "': node ", v, " is in both ", names[prev], " and ", what,
               " (splits must be disjoint)");
    owner[static_cast<size_t>(v)] = tag;
  }
}

}  // namespace

void Dataset::validate() const {
  const int64_t N = num_nodes;
  EW_REQUIRE(N >= 0 && N <= kMaxNodes, "dataset '", name, "': num_nodes (", N, ") must lie in [0, 2^31 - 1]");
  EW_REQUIRE(edge_index.size() % 2 == 0, "dataset '", name, "': edge_index.size() (", edge_index.size(),
             ") must be even ([2, E])");
  // The first bad edge id, found in parallel (min over positions is thread-count independent).
  const int64_t n_ids = static_cast<int64_t>(edge_index.size());
  int64_t first_bad = n_ids;
  const int64_t* ids = edge_index.data();
#pragma omp parallel for reduction(min : first_bad) schedule(static) if (n_ids >= kMinParallelWork)
  for (int64_t i = 0; i < n_ids; ++i) {
    if ((ids[i] < 0 || ids[i] >= N) && i < first_bad) first_bad = i;
  }
  if (first_bad < n_ids) {
    const int64_t E = num_edges();
    detail::throw_invalid_argument("dataset '", name, "': edge_index[", first_bad / E, ", ", first_bad % E, "] (",
                                   ids[first_bad], ") must lie in [0, ", N, ")");
  }
  EW_REQUIRE(num_classes >= 0, "dataset '", name, "': num_classes (", num_classes, ") must be >= 0");
  if (!labels.empty()) {
    EW_REQUIRE(static_cast<int64_t>(labels.size()) == N, "dataset '", name, "': labels.size() (", labels.size(),
               ") must equal num_nodes (", N, ")");
    for (size_t i = 0; i < labels.size(); ++i)
      EW_REQUIRE(labels[i] >= 0 && labels[i] < num_classes, "dataset '", name, "': labels[", i, "] (", labels[i],
                 ") must lie in [0, num_classes = ", num_classes, ")");
  }
  if (!edge_weight.empty()) {
    EW_REQUIRE(static_cast<int64_t>(edge_weight.size()) == num_edges(), "dataset '", name, "': edge_weight has ",
               edge_weight.size(), " values, not E = ", num_edges());
    for (size_t i = 0; i < edge_weight.size(); ++i)
      EW_REQUIRE(std::isfinite(edge_weight[i]), "dataset '", name, "': edge_weight[", i, "] (", edge_weight[i],
                 ") must be finite");
  }
  if (edge_feat_dim != 0 || !edge_feat.empty()) {
    const int64_t D = edge_feat_dim, E = num_edges();
    EW_REQUIRE(D >= 1 && static_cast<int64_t>(edge_feat.size()) == E * D, "dataset '", name, "': edge_feat has ",
               edge_feat.size(), " values, not E * edge_feat_dim = ", E, " * ", D);
    for (size_t i = 0; i < edge_feat.size(); ++i)
      EW_REQUIRE(std::isfinite(edge_feat[i]), "dataset '", name, "': edge_feat[", static_cast<int64_t>(i) / D, ", ",
                 static_cast<int64_t>(i) % D, "] (", edge_feat[i], ") must be finite");
  }
  std::vector<uint8_t> owner(static_cast<size_t>(N), 0);
  check_split(*this, train_idx, "train_idx", 1, owner);
  check_split(*this, valid_idx, "valid_idx", 2, owner);
  check_split(*this, test_idx, "test_idx", 3, owner);

  const Features& f = features;
  EW_REQUIRE(f.format != FeatureFormat::Auto, "dataset '", name, "': features.format must be Dense or Sparse");
  EW_REQUIRE(f.rows == N, "dataset '", name, "': features have ", f.rows, " rows, num_nodes is ", N);
  EW_REQUIRE(f.cols >= 0, "dataset '", name, "': features.cols (", f.cols, ") must be >= 0");
  if (f.is_sparse()) {
    EW_REQUIRE(f.csr.rows == f.rows && f.csr.cols == f.cols, "dataset '", name, "': features.csr is ", f.csr.rows,
               " x ", f.csr.cols, ", features ", f.rows, " x ", f.cols);
    f.csr.validate("dataset '" + name + "': features.csr");
    EW_REQUIRE(f.dense.empty(), "dataset '", name, "': sparse features must leave features.dense empty");
  } else {
    EW_REQUIRE(static_cast<int64_t>(f.dense.size()) == f.rows * f.cols, "dataset '", name, "': features.dense.size() (",
               f.dense.size(), ") must equal ", f.rows, " x ", f.cols);
  }
  if (const auto bad = first_nonfinite(f))
    detail::throw_invalid_argument("dataset '", name, "': features[", bad->row, ", ", bad->col, "] (", bad->value,
                                   ") must be finite");
}

}  // namespace edgewise::gnn
