// What the dataset readers share: scipy-style compressed sparse parts, edges from
// adjacency entries, feature format, degree features, class count, random split.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "edgewise/kernels/common/counter_rng.hpp"
#include "data/formats/formats.hpp"

namespace edgewise::gnn::formats {

namespace {

[[noreturn]] void fail_key(const std::string& where, const std::string& key, const std::string& what) {
  throw DataFileError(where + ": key '" + key + "' " + what);
}

void require_key(const std::string& file, const NpzArchive& archive, const std::string& key) {
  if (archive.contains(key)) return;
  std::string names;
  for (const std::string& k : archive.keys()) names += (names.empty() ? "" : ", ") + k;
  throw DataFileError("npz '" + file + "': required key '" + key +
                      "' is missing (it holds: " + (names.empty() ? "nothing" : names) + ")");
}

}  // namespace

void CompressedParts::check(const std::string& where, const std::string& prefix) const {
  const std::string ptr = prefix + "indptr", idx = prefix + "indices";
  if (static_cast<int64_t>(indptr.size()) != outer + 1)
    fail_key(where, ptr,
             "has " + std::to_string(indptr.size()) + " entries, expected " + std::to_string(outer + 1) +
                 " (one more than the " + std::to_string(outer) + " rows of its shape)");
  if (indptr[0] != 0) fail_key(where, ptr, "must start at 0, got " + std::to_string(indptr[0]));
  for (int64_t r = 0; r < outer; ++r) {
    if (indptr[static_cast<size_t>(r) + 1] < indptr[static_cast<size_t>(r)])
      fail_key(where, ptr, "decreases at position " + std::to_string(r + 1));
  }
  if (indptr.back() != static_cast<int64_t>(indices.size()))
    fail_key(where, ptr,
             "ends at " + std::to_string(indptr.back()) + ", but '" + idx + "' has " + std::to_string(indices.size()) +
                 " entries");
  if (data.size() != indices.size())
    fail_key(
        where, prefix + "data",
        "has " + std::to_string(data.size()) + " entries, but '" + idx + "' has " + std::to_string(indices.size()));
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < 0 || indices[k] >= inner)
      fail_key(where, idx,
               "holds indices[" + std::to_string(k) + "] (" + std::to_string(indices[k]) + ") outside [0, " +
                   std::to_string(inner) + ")");
  }
}

CompressedParts read_compressed(const std::string& file, const NpzArchive& archive, const std::string& prefix,
                                bool csc) {
  for (const char* part : {"data", "indices", "indptr", "shape"}) require_key(file, archive, prefix + part);
  const std::string where = "npz '" + file + "'";
  const std::vector<int64_t> shape = archive.read(prefix + "shape").as<int64_t>();
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0)
    fail_key(where, prefix + "shape", "must hold two sizes >= 0 (rows, columns)");
  CompressedParts m;
  m.outer = csc ? shape[1] : shape[0];
  m.inner = csc ? shape[0] : shape[1];
  m.indptr = archive.read(prefix + "indptr").as<int64_t>();
  m.indices = archive.read(prefix + "indices").as<int64_t>();
  m.data = archive.read(prefix + "data").as<float>();
  m.check(where, prefix);
  return m;
}

std::vector<int64_t> edges_from_pairs(std::vector<std::pair<int64_t, int64_t>> pairs) {
  std::sort(pairs.begin(), pairs.end());
  const size_t E = pairs.size();
  std::vector<int64_t> edge_index(2 * E);
  for (size_t e = 0; e < E; ++e) {
    edge_index[e] = pairs[e].first;
    edge_index[E + e] = pairs[e].second;
  }
  return edge_index;
}

std::vector<int64_t> edges_from_weighted_pairs(std::vector<std::pair<int64_t, int64_t>> pairs,
                                               std::vector<float> weights, std::vector<float>& weights_out) {
  std::vector<size_t> order(pairs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pairs[a] < pairs[b]; });
  const size_t E = pairs.size();
  std::vector<int64_t> edge_index(2 * E);
  weights_out.resize(E);
  for (size_t e = 0; e < E; ++e) {
    edge_index[e] = pairs[order[e]].first;
    edge_index[E + e] = pairs[order[e]].second;
    weights_out[e] = weights[order[e]];
  }
  return edge_index;
}

void require_node_count(int64_t n, const LoadOptions& options, const std::string& where, const std::string& what) {
  if (n < 1)
    throw DataFileError(where + ": " + what + " (" + std::to_string(n) + ") makes no nodes: a dataset needs at least one");
  if (n > options.max_nodes)
    throw DataFileError(where + ": " + what + " (" + std::to_string(n) + ") makes more nodes than the " +
                        std::to_string(options.max_nodes) + " allowed (LoadOptions::max_nodes; a Graph holds at most " +
                        "2^31 - 1)");
}

std::vector<int64_t> edges_from_compressed(const CompressedParts& m, bool csc) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  pairs.reserve(m.indices.size());
  for (int64_t o = 0; o < m.outer; ++o) {
    for (int64_t k = m.indptr[static_cast<size_t>(o)]; k < m.indptr[static_cast<size_t>(o) + 1]; ++k) {
      if (m.data[static_cast<size_t>(k)] == 0.0f) continue;  // an explicitly stored zero is no edge
      const int64_t i = m.indices[static_cast<size_t>(k)];
      pairs.emplace_back(csc ? i : o, csc ? o : i);
    }
  }
  return edges_from_pairs(std::move(pairs));
}

CsrMatrix csr_features(CompressedParts m, const std::string& where, const std::string& key) {
  if (m.inner > std::numeric_limits<int32_t>::max())
    fail_key(where, key, "has " + std::to_string(m.inner) + " columns, more than CSR's int32 column indices allow");
  CsrMatrix csr;
  csr.rows = m.outer;
  csr.cols = m.inner;
  csr.offsets.assign(1, 0);
  csr.offsets.reserve(static_cast<size_t>(m.outer) + 1);
  csr.indices.reserve(m.indices.size());
  csr.values.reserve(m.indices.size());
  std::vector<std::pair<int64_t, float>> row;
  for (int64_t r = 0; r < m.outer; ++r) {
    row.clear();
    for (int64_t k = m.indptr[static_cast<size_t>(r)]; k < m.indptr[static_cast<size_t>(r) + 1]; ++k) {
      const float v = m.data[static_cast<size_t>(k)];
      if (!std::isfinite(v))
        fail_key(where, key,
                 "holds a non-finite value (" + std::to_string(v) + ") at [" + std::to_string(r) + ", " +
                     std::to_string(m.indices[static_cast<size_t>(k)]) + "] (features must be finite)");
      row.emplace_back(m.indices[static_cast<size_t>(k)], v);
    }
    std::stable_sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < row.size();) {
      float sum = 0.0f;  // scipy sums duplicate entries
      size_t j = i;
      for (; j < row.size() && row[j].first == row[i].first; ++j) sum += row[j].second;
      if (sum != 0.0f) {
        csr.indices.push_back(static_cast<int32_t>(row[i].first));
        csr.values.push_back(sum);
      }
      i = j;
    }
    csr.offsets.push_back(static_cast<int64_t>(csr.indices.size()));
  }
  return csr;
}

void apply_feature_format(Features& f, const LoadOptions& options, const std::string& where) {
  const auto to_dense = [&] {
    // A CSR shape can declare far more than its entries: check before inflating it.
    const double bytes = static_cast<double>(f.rows) * static_cast<double>(f.cols) * sizeof(float);
    const uint64_t limit = npz_max_entry_bytes();
    if (f.is_sparse() && bytes > static_cast<double>(limit))
      throw DataFileError(where + ": dense node features of " + std::to_string(f.rows) + " x " +
                          std::to_string(f.cols) + " would take " + std::to_string(static_cast<uint64_t>(bytes)) +
                          " bytes, more than the " + std::to_string(limit) +
                          "-byte entry limit (EDGEWISE_NPZ_MAX_BYTES); keep them sparse");
    f.to_dense();
  };
  switch (options.features) {
    case FeatureFormat::Dense: to_dense(); break;
    case FeatureFormat::Sparse: f.to_sparse(); break;
    case FeatureFormat::Auto:
      if (f.density() <= options.sparse_threshold && f.cols <= std::numeric_limits<int32_t>::max())
        f.to_sparse();
      else
        to_dense();
      break;
  }
}

void add_degree_features(Dataset& d, const LoadOptions& options) {
  Features& f = d.features;
  f = Features{};
  f.rows = d.num_nodes;
  f.cols = 1;
  f.format = FeatureFormat::Dense;
  f.dense.assign(static_cast<size_t>(d.num_nodes), 0.0f);
  for (int64_t v : d.dst()) f.dense[static_cast<size_t>(v)] += 1.0f;
  apply_feature_format(f, options, d.name);
  add_note(d, "no node features in the file: one feature per node, its in-degree");
}

int64_t infer_num_classes(const std::vector<int64_t>& labels, int64_t num_nodes, const std::string& where) {
  if (labels.empty()) return 0;
  size_t top = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0)
      throw DataFileError(where + ": labels[" + std::to_string(i) + "] (" + std::to_string(labels[i]) +
                          ") is negative (labels are class ids >= 0)");
    if (labels[i] > labels[top]) top = i;
  }
  if (labels[top] >= num_nodes || labels[top] >= kMaxClasses)
    throw DataFileError(where + ": labels[" + std::to_string(top) + "] (" + std::to_string(labels[top]) +
                        ") would make more classes than the " + std::to_string(num_nodes) +
                        " nodes (a corrupt label?)");
  return labels[top] + 1;
}

void add_random_split(Dataset& d, uint64_t seed, const std::vector<bool>& unlabelled, int64_t train_per_class,
                      int64_t valid_per_class) {
  std::vector<std::vector<int64_t>> by_class(static_cast<size_t>(d.num_classes));
  int64_t left_out = 0;
  for (int64_t v = 0; v < static_cast<int64_t>(d.labels.size()); ++v) {
    if (!unlabelled.empty() && unlabelled[static_cast<size_t>(v)]) {
      ++left_out;
      continue;
    }
    by_class[static_cast<size_t>(d.labels[static_cast<size_t>(v)])].push_back(v);
  }
  d.train_idx.clear();
  d.valid_idx.clear();
  d.test_idx.clear();
  int64_t small = 0;
  for (size_t c = 0; c < by_class.size(); ++c) {
    std::vector<int64_t>& ids = by_class[c];
    CounterRng rng(seed, kSaltRandomSplit, c);
    for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[rng.below(i)]);  // Fisher-Yates
    const auto n = static_cast<int64_t>(ids.size());
    const int64_t train_end = std::min(n, train_per_class), valid_end = std::min(n, train_end + valid_per_class);
    if (n > 0 && n <= train_per_class + valid_per_class) ++small;
    d.train_idx.insert(d.train_idx.end(), ids.begin(), ids.begin() + train_end);
    d.valid_idx.insert(d.valid_idx.end(), ids.begin() + train_end, ids.begin() + valid_end);
    d.test_idx.insert(d.test_idx.end(), ids.begin() + valid_end, ids.end());
  }
  for (auto* list : {&d.train_idx, &d.valid_idx, &d.test_idx}) std::sort(list->begin(), list->end());
  std::string note = "no split in the file: a random one, " + std::to_string(train_per_class) + " train and " +
                     std::to_string(valid_per_class) + " valid nodes per class, the rest test (seed " +
                     std::to_string(seed) + ")";
  if (small > 0) note += "; " + std::to_string(small) + " class(es) too small to leave test nodes";
  if (left_out > 0) note += "; " + std::to_string(left_out) + " unlabelled node(s) in no split";
  add_note(d, note);
}

void add_note(Dataset& d, const std::string& sentence) {
  if (!d.note.empty()) d.note += "; ";
  d.note += sentence;
}

void validate_loaded(const Dataset& d, const std::string& where) {
  try {
    d.validate();
  } catch (const std::invalid_argument& e) {
    throw DataFileError(where + ": " + e.what());
  }
}

}  // namespace edgewise::gnn::formats
