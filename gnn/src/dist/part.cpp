// One rank's part of a partitioned graph: owned and halo nodes, local edges,
// send / receive maps; written to and read from .npz.
#include <algorithm>
#include <numeric>

#include "edgewise/gnn/dist/partition.hpp"
#include "edgewise/gnn/data/npz_writer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::dist {

namespace {

// Global CSR position of each node's first stored feature value (nonzeros only for
// dense features, as Features::to_sparse stores them).
std::vector<int64_t> global_value_base(const Features& f) {
  if (f.is_sparse()) return f.csr.offsets;
  std::vector<int64_t> base(static_cast<size_t>(f.rows) + 1, 0);
  for (int64_t r = 0; r < f.rows; ++r) {
    const float* row = f.dense.data() + r * f.cols;
    base[static_cast<size_t>(r) + 1] =
        base[static_cast<size_t>(r)] + std::count_if(row, row + f.cols, [](float x) { return x != 0.0f; });
  }
  return base;
}

Features take_rows(const Features& f, const std::vector<int64_t>& rows) {
  Features out;
  out.rows = static_cast<int64_t>(rows.size());
  out.cols = f.cols;
  out.format = f.format;
  if (f.is_sparse()) {
    out.csr.rows = out.rows;
    out.csr.cols = f.cols;
    for (int64_t g : rows) {
      for (int64_t k = f.csr.offsets[static_cast<size_t>(g)]; k < f.csr.offsets[static_cast<size_t>(g) + 1]; ++k) {
        out.csr.indices.push_back(f.csr.indices[static_cast<size_t>(k)]);
        out.csr.values.push_back(f.csr.values[static_cast<size_t>(k)]);
      }
      out.csr.offsets.push_back(static_cast<int64_t>(out.csr.indices.size()));
    }
  } else {
    out.dense.reserve(static_cast<size_t>(out.rows * f.cols));
    for (int64_t g : rows) {
      const auto first = f.dense.begin() + g * f.cols;
      out.dense.insert(out.dense.end(), first, first + f.cols);
    }
  }
  return out;
}

std::vector<int64_t> restrict_split(const std::vector<int64_t>& split, const std::vector<int64_t>& local_of,
                                    const std::vector<int32_t>& part, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t g : split)
    if (part[static_cast<size_t>(g)] == rank) out.push_back(local_of[static_cast<size_t>(g)]);
  return out;
}

}  // namespace

Part build_part(const Dataset& d, const Partition& p, int64_t rank) {
  const int64_t n = d.num_nodes, k = p.num_parts;
  EW_REQUIRE(static_cast<int64_t>(p.part.size()) == n, "build_part: the partition has ", p.part.size(),
             " nodes but dataset '", d.name, "' has ", n);
  EW_REQUIRE(rank >= 0 && rank < k, "build_part: rank (", rank, ") must lie in [0, ", k, ")");
  EW_REQUIRE(d.edge_weight.empty(), "build_part: dataset '", d.name,
             "' has edge weights, which distributed training does not take (yet): train in one process");
  for (size_t v = 0; v < p.part.size(); ++v)
    EW_REQUIRE(p.part[v] >= 0 && p.part[v] < k, "build_part: part[", v, "] (", p.part[v], ") must lie in [0, ", k,
               ")");
  Part out;
  out.rank = rank;
  out.num_parts = k;
  out.num_global_nodes = n;
  const auto src = d.src(), dst = d.dst();
  const auto owner = [&](int64_t g) { return static_cast<int64_t>(p.part[static_cast<size_t>(g)]); };

  // Owned nodes (ascending), then the halo: sources of edges into owned nodes
  // that another rank owns, ordered by (owner, global id).
  std::vector<int64_t> local_of(static_cast<size_t>(n), -1);
  for (int64_t g = 0; g < n; ++g)
    if (owner(g) == rank) out.global_ids.push_back(g);
  out.num_owned = static_cast<int64_t>(out.global_ids.size());
  std::vector<int64_t> halo;
  for (size_t e = 0; e < src.size(); ++e) {
    if (owner(dst[e]) != rank || owner(src[e]) == rank) continue;
    if (local_of[static_cast<size_t>(src[e])] == -1) {
      local_of[static_cast<size_t>(src[e])] = -2;  // seen
      halo.push_back(src[e]);
    }
  }
  std::sort(halo.begin(), halo.end(), [&](int64_t a, int64_t b) {
    return owner(a) != owner(b) ? owner(a) < owner(b) : a < b;
  });
  out.global_ids.insert(out.global_ids.end(), halo.begin(), halo.end());
  for (size_t i = 0; i < out.global_ids.size(); ++i) local_of[static_cast<size_t>(out.global_ids[i])] = static_cast<int64_t>(i);
  out.recv_offsets.assign(static_cast<size_t>(k) + 1, 0);
  for (int64_t g : halo) {
    out.halo_owner.push_back(static_cast<int32_t>(owner(g)));
    ++out.recv_offsets[static_cast<size_t>(owner(g)) + 1];
  }
  std::partial_sum(out.recv_offsets.begin(), out.recv_offsets.end(), out.recv_offsets.begin());

  // Send maps: owned u goes to rank s when u has an edge into a node s owns; in
  // ascending global id, the order of s's halo block from this rank.
  std::vector<std::vector<int64_t>> to_peer(static_cast<size_t>(k));
  for (size_t e = 0; e < src.size(); ++e) {
    if (owner(src[e]) == rank && owner(dst[e]) != rank) to_peer[static_cast<size_t>(owner(dst[e]))].push_back(src[e]);
  }
  out.send_offsets.assign(1, 0);
  for (auto& nodes : to_peer) {
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (int64_t g : nodes) out.send_index.push_back(local_of[static_cast<size_t>(g)]);
    out.send_offsets.push_back(static_cast<int64_t>(out.send_index.size()));
  }

  // The local dataset: edges into owned nodes, in input order.
  Dataset& l = out.local;
  l.name = d.name + ".part" + std::to_string(rank) + "of" + std::to_string(k);
  l.num_nodes = out.num_local();
  l.num_classes = d.num_classes;
  std::vector<int64_t> lsrc, ldst;
  for (size_t e = 0; e < src.size(); ++e) {
    if (owner(dst[e]) != rank) continue;
    lsrc.push_back(local_of[static_cast<size_t>(src[e])]);
    ldst.push_back(local_of[static_cast<size_t>(dst[e])]);
  }
  l.edge_index = std::move(lsrc);
  l.edge_index.insert(l.edge_index.end(), ldst.begin(), ldst.end());
  if (!d.labels.empty())
    for (int64_t g : out.global_ids) l.labels.push_back(d.labels[static_cast<size_t>(g)]);
  l.train_idx = restrict_split(d.train_idx, local_of, p.part, rank);
  l.valid_idx = restrict_split(d.valid_idx, local_of, p.part, rank);
  l.test_idx = restrict_split(d.test_idx, local_of, p.part, rank);
  if (d.features.cols > 0) {
    l.features = take_rows(d.features, out.global_ids);
    const std::vector<int64_t> base = global_value_base(d.features);
    for (int64_t g : out.global_ids) out.feature_value_base.push_back(base[static_cast<size_t>(g)]);
  } else {
    out.feature_value_base.assign(out.global_ids.size(), 0);
  }
  return out;
}

void write_part(const std::string& path, const Part& part) {
  const Dataset& l = part.local;
  Features dense = l.features;
  dense.to_dense();
  const auto n_local = part.num_local();
  auto vec = [](const auto& v) { return std::vector<int64_t>{static_cast<int64_t>(v.size())}; };
  NpzEntries entries;
  entries.emplace_back("num_nodes", npy_scalar<int64_t>(l.num_nodes));
  entries.emplace_back("edge_index", npy_array(l.edge_index, {2, l.num_edges()}));
  entries.emplace_back("node_feat", npy_array(dense.dense, {n_local, dense.cols}));
  entries.emplace_back("node_label", npy_array(l.labels, vec(l.labels)));
  entries.emplace_back("num_classes", npy_scalar<int64_t>(l.num_classes));
  entries.emplace_back("train_idx", npy_array(l.train_idx, vec(l.train_idx)));
  entries.emplace_back("valid_idx", npy_array(l.valid_idx, vec(l.valid_idx)));
  entries.emplace_back("test_idx", npy_array(l.test_idx, vec(l.test_idx)));
  entries.emplace_back("part_rank", npy_scalar<int64_t>(part.rank));
  entries.emplace_back("part_num_parts", npy_scalar<int64_t>(part.num_parts));
  entries.emplace_back("part_num_global_nodes", npy_scalar<int64_t>(part.num_global_nodes));
  entries.emplace_back("part_num_owned", npy_scalar<int64_t>(part.num_owned));
  entries.emplace_back("part_global_ids", npy_array(part.global_ids, vec(part.global_ids)));
  entries.emplace_back("part_halo_owner", npy_array(part.halo_owner, vec(part.halo_owner)));
  entries.emplace_back("part_send_offsets", npy_array(part.send_offsets, vec(part.send_offsets)));
  entries.emplace_back("part_send_index", npy_array(part.send_index, vec(part.send_index)));
  entries.emplace_back("part_recv_offsets", npy_array(part.recv_offsets, vec(part.recv_offsets)));
  entries.emplace_back("part_feature_value_base", npy_array(part.feature_value_base, vec(part.feature_value_base)));
  write_npz(path, entries);
}

namespace {

template <class T>
std::vector<T> read_vector(const NpzArchive& a, const char* key) {
  if (!a.contains(key)) throw DataFileError(a.path() + ": the part has no '" + key + "'");
  return a.read(key).as<T>();
}

int64_t read_scalar(const NpzArchive& a, const char* key) {
  if (!a.contains(key)) throw DataFileError(a.path() + ": the part has no '" + key + "'");
  return a.read(key).scalar<int64_t>();
}

void require(bool ok, const NpzArchive& a, const char* key, const std::string& what) {
  if (!ok) throw DataFileError(a.path() + ": '" + key + "' " + what);
}

bool nondecreasing_from_zero(const std::vector<int64_t>& v, int64_t last) {
  return !v.empty() && v.front() == 0 && v.back() == last && std::is_sorted(v.begin(), v.end());
}

}  // namespace

Part read_part(const std::string& path) {
  const NpzArchive a = NpzArchive::open(path);
  Part part;
  part.rank = read_scalar(a, "part_rank");
  part.num_parts = read_scalar(a, "part_num_parts");
  part.num_global_nodes = read_scalar(a, "part_num_global_nodes");
  part.num_owned = read_scalar(a, "part_num_owned");
  part.global_ids = read_vector<int64_t>(a, "part_global_ids");
  part.halo_owner = read_vector<int32_t>(a, "part_halo_owner");
  part.send_offsets = read_vector<int64_t>(a, "part_send_offsets");
  part.send_index = read_vector<int64_t>(a, "part_send_index");
  part.recv_offsets = read_vector<int64_t>(a, "part_recv_offsets");
  part.feature_value_base = read_vector<int64_t>(a, "part_feature_value_base");
  const int64_t k = part.num_parts, n_local = part.num_local();
  require(k >= 1 && part.rank >= 0 && part.rank < k, a, "part_rank", "must lie in [0, part_num_parts)");
  require(part.num_owned >= 0 && part.num_owned <= n_local, a, "part_num_owned",
          "must lie in [0, len(part_global_ids)]");
  require(std::all_of(part.global_ids.begin(), part.global_ids.end(),
                      [&](int64_t g) { return g >= 0 && g < part.num_global_nodes; }),
          a, "part_global_ids", "must lie in [0, part_num_global_nodes)");
  require(static_cast<int64_t>(part.halo_owner.size()) == part.num_halo(), a, "part_halo_owner",
          "must have one entry per halo node");
  require(static_cast<int64_t>(part.send_offsets.size()) == k + 1 &&
              nondecreasing_from_zero(part.send_offsets, static_cast<int64_t>(part.send_index.size())),
          a, "part_send_offsets", "must be k + 1 nondecreasing offsets from 0 to len(part_send_index)");
  require(std::all_of(part.send_index.begin(), part.send_index.end(),
                      [&](int64_t i) { return i >= 0 && i < part.num_owned; }),
          a, "part_send_index", "must hold owned local ids");
  require(static_cast<int64_t>(part.recv_offsets.size()) == k + 1 &&
              nondecreasing_from_zero(part.recv_offsets, part.num_halo()),
          a, "part_recv_offsets", "must be k + 1 nondecreasing offsets from 0 to the halo size");
  for (int64_t s = 0; s < k; ++s)
    for (int64_t i = part.recv_offsets[static_cast<size_t>(s)]; i < part.recv_offsets[static_cast<size_t>(s) + 1]; ++i)
      require(part.halo_owner[static_cast<size_t>(i)] == s, a, "part_halo_owner",
              "must match part_recv_offsets (halo grouped by owner)");
  require(static_cast<int64_t>(part.feature_value_base.size()) == n_local, a, "part_feature_value_base",
          "must have one entry per local node");

  Dataset& l = part.local;
  l.name = a.path();
  l.num_nodes = read_scalar(a, "num_nodes");
  require(l.num_nodes == n_local, a, "num_nodes", "must equal len(part_global_ids)");
  l.num_classes = read_scalar(a, "num_classes");
  l.edge_index = read_vector<int64_t>(a, "edge_index");
  l.labels = read_vector<int64_t>(a, "node_label");
  l.train_idx = read_vector<int64_t>(a, "train_idx");
  l.valid_idx = read_vector<int64_t>(a, "valid_idx");
  l.test_idx = read_vector<int64_t>(a, "test_idx");
  const NpyArray feat = a.read("node_feat");
  require(feat.ndim() == 2 && feat.shape[0] == n_local, a, "node_feat", "must have shape [num_nodes, F]");
  l.features.rows = n_local;
  l.features.cols = feat.shape[1];
  l.features.format = FeatureFormat::Dense;
  l.features.dense = feat.as<float>();
  try {
    l.validate();
  } catch (const std::invalid_argument& e) {
    throw DataFileError(a.path() + ": " + e.what());
  }
  return part;
}

}  // namespace edgewise::gnn::dist
