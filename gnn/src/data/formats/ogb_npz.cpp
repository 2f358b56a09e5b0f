// The OGB-layout .npz reader: keys num_nodes, edge_index, node_feat, node_label, the
// splits, edge_feat; node features streamed straight into CSR (or dense) without an
// intermediate copy.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "data/finite_scan.hpp"
#include "data/formats/formats.hpp"
#include "data/nonzero_scan.hpp"
#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "data/io/npy_shape.hpp"

namespace edgewise::gnn::formats {

namespace {

// Payloads are inflated in pieces of about this many bytes: small enough to stay
// in cache for the CRC (and, on the CSR path, whose ring holds three pieces, the
// nonzero scan), large enough to amortise the hand-offs between the two threads.
constexpr size_t kPieceBytes = size_t{4} << 20;
constexpr size_t kCsrPieceBytes = size_t{1} << 20;


class Loader {
 public:
  Loader(const std::string& file, const LoadOptions& options)
      : file_(file), options_(options), archive_(NpzArchive::open(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw DataFileError("npz '" + file_ + "': key '" + key + "' " + what);
  }

  bool has(const char* key) const { return archive_.contains(key); }

  void require(const char* key) const {
    if (!has(key)) {
      std::string names;
      for (const std::string& k : archive_.keys()) names += (names.empty() ? "" : ", ") + k;
      throw DataFileError("npz '" + file_ + "': required key '" + key + "' is missing (it holds: " +
                          (names.empty() ? "nothing" : names) + ")");
    }
  }

  // A whole integer array as int64; int64 C-order data is read straight into the result.
  std::vector<int64_t> int64_array(const char* key, std::vector<int64_t>* shape_out) const {
    NpyStream s = archive_.stream(key);
    const NpyHeader h = s.header();
    if (shape_out) *shape_out = h.shape;
    if (h.dtype.kind == 'f') fail(key, "must hold integers, not " + h.dtype.str());
    if (h.dtype == NpyDtype{'i', 8} && !h.fortran_order) {
      std::vector<int64_t> out(static_cast<size_t>(h.size()));
      s.read_pipelined(out.data(), kPieceBytes);
      return out;
    }
    return archive_.read(key).as<int64_t>();
  }

  Features features(int64_t N) const {
    NpyStream s = archive_.stream("node_feat");
    const NpyHeader h = s.header();
    if (h.shape.size() != 2 || h.shape[0] != N)
      fail("node_feat", "must have shape (N, F) with N = " + std::to_string(N) + ", got " + npy_shape_str(h.shape));
    Features f;
    f.rows = N;
    f.cols = h.shape[1];
    const int64_t F = f.cols;
    const bool sparse_possible = F <= std::numeric_limits<int32_t>::max();
    FeatureFormat want = options_.features;
    if (!sparse_possible) {
      if (want == FeatureFormat::Sparse)
        fail("node_feat", "has " + std::to_string(F) + " columns, more than CSR's int32 column indices allow");
      want = FeatureFormat::Dense;
    }
    // Only float32 in C order streams as is; anything else is read whole and converted.
    const bool direct = h.dtype == NpyDtype{'f', 4} && (!h.fortran_order || N <= 1 || F <= 1);
    if (!direct) {
      f.dense = archive_.read("node_feat").as<float>();
      f.format = FeatureFormat::Dense;
      if (want == FeatureFormat::Sparse || (want == FeatureFormat::Auto && f.density() <= options_.sparse_threshold))
        f.to_sparse();
      return f;
    }
    if (want == FeatureFormat::Dense) {
      f.dense.resize(static_cast<size_t>(N * F));
      s.read_pipelined(f.dense.data(), kPieceBytes);
      f.format = FeatureFormat::Dense;
      return f;
    }
    // CSR, a piece of whole rows at a time: the dense matrix is never held whole.
    // The pieces are scanned on the pipeline's second thread while the next
    // piece is inflated.
    f.format = FeatureFormat::Sparse;
    CsrMatrix& m = f.csr;
    m.rows = N;
    m.cols = F;
    if (N == 0 || F == 0) {
      m.offsets.assign(static_cast<size_t>(N) + 1, 0);
      s.read_pipelined(nullptr, 1);
      return f;
    }
    m.offsets.reserve(static_cast<size_t>(N) + 1);
    const int64_t row_bytes = F * static_cast<int64_t>(sizeof(float));
    const int64_t piece_rows = std::max<int64_t>(1, static_cast<int64_t>(kCsrPieceBytes) / row_bytes);
    const double limit = want == FeatureFormat::Auto ? options_.sparse_threshold * static_cast<double>(N) *
                                                           static_cast<double>(F)
                                                     : std::numeric_limits<double>::infinity();
    int64_t done = 0;  // rows consumed so far
    s.read_pipelined(nullptr, static_cast<size_t>(piece_rows * row_bytes), [&](const std::byte* data, size_t bytes) {
      const int64_t n = static_cast<int64_t>(bytes) / row_bytes;
      if (f.format == FeatureFormat::Dense) {  // Auto, after switching
        std::memcpy(f.dense.data() + done * F, data, bytes);
        done += n;
        return;
      }
      append_nonzero_rows(reinterpret_cast<const float*>(data), n, F, m, /*parallel=*/false);
      done += n;
      if (static_cast<double>(m.nnz()) > limit) {
        // Auto on dense data: expand the rows so far; the rest is copied as it comes.
        f.dense.assign(static_cast<size_t>(N * F), 0.0f);
        for (int64_t i = 0; i < done; ++i) {
          for (int64_t k = m.offsets[static_cast<size_t>(i)]; k < m.offsets[static_cast<size_t>(i) + 1]; ++k)
            f.dense[static_cast<size_t>(i * F + m.indices[static_cast<size_t>(k)])] = m.values[static_cast<size_t>(k)];
        }
        m = CsrMatrix{};
        f.format = FeatureFormat::Dense;
      }
    });
    return f;
  }

  // The class count: the num_classes key (checked against the labels), else
  // max(label) + 1 with every label >= 0 and no more classes than nodes.
  int64_t num_classes(const Dataset& d) const {
    const auto& labels = d.labels;
    if (has("num_classes")) {
      const int64_t c = archive_.read("num_classes").scalar<int64_t>();
      if (c < 0 || c > kMaxClasses || (c == 0 && !labels.empty()))
        fail("num_classes", "(" + std::to_string(c) + ") must lie in [" + (labels.empty() ? "0" : "1") + ", " +
                                std::to_string(kMaxClasses) + "]");
      for (size_t i = 0; i < labels.size(); ++i) {
        if (labels[i] < 0 || labels[i] >= c)
          fail("node_label", "holds labels[" + std::to_string(i) + "] (" + std::to_string(labels[i]) +
                                 ") outside [0, num_classes = " + std::to_string(c) + ")");
      }
      return c;
    }
    if (labels.empty()) return 0;
    size_t top = 0;
    for (size_t i = 0; i < labels.size(); ++i) {
      if (labels[i] < 0)
        fail("node_label", "holds labels[" + std::to_string(i) + "] (" + std::to_string(labels[i]) +
                               ") outside [0, num_classes) (labels must be >= 0)");
      if (labels[i] > labels[top]) top = i;
    }
    const int64_t max_label = labels[top];
    if (max_label >= d.num_nodes || max_label >= kMaxClasses)
      fail("node_label", "holds labels[" + std::to_string(top) + "] (" + std::to_string(max_label) +
                             "), which would make max(label) + 1 classes, more than the " +
                             std::to_string(d.num_nodes) +
                             " nodes (a corrupt label? store a num_classes key if that many classes are meant)");
    return max_label + 1;
  }

  Dataset load() const {
    Dataset d;
    d.name = std::filesystem::path(file_).stem().string();
    require("num_nodes");
    require("edge_index");
    d.num_nodes = archive_.read("num_nodes").scalar<int64_t>();
    // Graph ids are int32; refusing here also keeps a tiny file from driving an
    // allocation of num_nodes-sized arrays (labels, feature offsets) it cannot fill.
    require_node_count(d.num_nodes, options_, "npz '" + file_ + "'", "key 'num_nodes'");
    std::vector<int64_t> shape;
    d.edge_index = int64_array("edge_index", &shape);
    if (shape.size() != 2 || shape[0] != 2) fail("edge_index", "must have shape (2, E), got " + npy_shape_str(shape));
    if (has("node_label")) {
      d.labels = int64_array("node_label", &shape);
      const bool ok = (shape.size() == 1 && shape[0] == d.num_nodes) ||
                      (shape.size() == 2 && shape[0] == d.num_nodes && shape[1] == 1);
      if (!ok)
        fail("node_label", "must have shape (N,) or (N, 1) with N = " + std::to_string(d.num_nodes) + ", got " +
                               npy_shape_str(shape));
    }
    d.num_classes = num_classes(d);
    const std::pair<const char*, std::vector<int64_t>*> splits[] = {
        {"train_idx", &d.train_idx}, {"valid_idx", &d.valid_idx}, {"test_idx", &d.test_idx}};
    for (auto [key, list] : splits) {
      if (!has(key)) continue;
      *list = int64_array(key, &shape);
      if (shape.size() != 1) fail(key, "must be 1-D, got shape " + npy_shape_str(shape));
      if (list->empty()) fail(key, "is empty (leave the key out when there is no such split)");
    }
    if (!d.labels.empty() && !has("train_idx") && !has("valid_idx") && !has("test_idx"))
      add_random_split(d, options_.split_seed);
    if (has("node_feat")) {
      d.features = features(d.num_nodes);
      if (const auto bad = first_nonfinite(d.features)) {
        std::ostringstream what;
        what << "holds a non-finite value (" << bad->value << ") at [" << bad->row << ", " << bad->col
             << "] (features must be finite)";
        fail("node_feat", what.str());
      }
    } else {
      d.features.rows = d.num_nodes;
      d.features.format = options_.features == FeatureFormat::Sparse ? FeatureFormat::Sparse : FeatureFormat::Dense;
      if (d.features.is_sparse()) {
        d.features.csr.rows = d.num_nodes;
        d.features.csr.offsets.assign(static_cast<size_t>(d.num_nodes) + 1, 0);
      }
    }
    if (has("edge_feat")) read_edge_features(d);
    apply_edge_conventions(d, EdgeConvention{}, options_, "npz '" + file_ + "'");
    try {
      d.validate();
    } catch (const std::invalid_argument& e) {
      throw DataFileError("npz '" + file_ + "': " + e.what());
    }
    return d;
  }

  // edge_feat [E, D] (or [E]: D = 1), one row per edge_index column, finite.
  void read_edge_features(Dataset& d) const {
    const NpyArray a = archive_.read("edge_feat");
    const int64_t E = d.num_edges();
    const bool ok = (a.shape.size() == 1 && a.shape[0] == E) || (a.shape.size() == 2 && a.shape[0] == E && a.shape[1] >= 1);
    if (!ok) fail("edge_feat", "must have shape (E, D) or (E,) with E = " + std::to_string(E) + ", got " + npy_shape_str(a.shape));
    d.edge_feat_dim = a.shape.size() == 2 ? a.shape[1] : 1;
    d.edge_feat = a.as<float>();
    for (size_t i = 0; i < d.edge_feat.size(); ++i) {
      if (!std::isfinite(d.edge_feat[i])) {
        std::ostringstream what;
        what << "holds a non-finite value (" << d.edge_feat[i] << ") at [" << static_cast<int64_t>(i) / d.edge_feat_dim
             << ", " << static_cast<int64_t>(i) % d.edge_feat_dim << "] (edge features must be finite)";
        fail("edge_feat", what.str());
      }
    }
  }

 private:
  std::string file_;
  LoadOptions options_;
  NpzArchive archive_;
};

}  // namespace

Dataset load_ogb_npz(const std::string& file, const LoadOptions& options) { return Loader(file, options).load(); }

}  // namespace edgewise::gnn::formats
