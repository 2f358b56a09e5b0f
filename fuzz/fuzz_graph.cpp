// Fuzz target: Graph construction from arbitrary sizes, edge lists and weights
// (from_coo, from_csr) and the derived graphs. Input bytes:
//   byte 0      mode: bit 0 raw 64-bit num_nodes, bit 1 raw 64-bit ids,
//               bit 2 edge weights, bit 3 a src/dst length mismatch
//   bytes 1..8  num_nodes (raw, or reduced to [0, 64) unless bit 0)
//   then edges  (src, dst[, weight]) records: 1-byte signed ids, or 8-byte ids with bit 1
// Valid input must build a graph that matches a naive reference; invalid input
// must throw std::invalid_argument. Anything else is a bug.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "edgewise/gnn/graph/graph.hpp"

using edgewise::gnn::Graph;

namespace {

class Reader {
 public:
  Reader(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool has(std::size_t n) const { return size_ - pos_ >= n; }
  template <class T>
  T take() {
    T v{};
    if (!has(sizeof(T))) {
      pos_ = size_;
      return v;
    }
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

 private:
  const uint8_t* data_;
  std::size_t size_, pos_ = 0;
};

bool valid_input(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n,
                 const std::vector<float>& w) {
  if (n < 0 || n >= (int64_t{1} << 31) || src.size() != dst.size()) return false;
  if (!w.empty() && w.size() != src.size()) return false;
  for (size_t e = 0; e < src.size(); ++e)
    if (src[e] < 0 || src[e] >= n || dst[e] < 0 || dst[e] >= n) return false;
  for (float x : w)
    if (!std::isfinite(x)) return false;
  return true;
}

// CSR by destination against the naive reference: a stable sort of the input by destination.
void check_graph(const Graph& g, const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t n,
                 const std::vector<float>& w) {
  const int64_t E = static_cast<int64_t>(src.size());
  if (g.num_nodes() != n || g.num_edges() != E) std::abort();
  std::vector<int64_t> order(src.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return dst[a] < dst[b]; });
  const auto offsets = g.offsets().to_host_vector();
  const auto sources = g.sources().to_host_vector();
  const auto ids = g.edge_ids().to_host_vector();
  if (static_cast<int64_t>(offsets.size()) != n + 1 || offsets[0] != 0 || offsets[n] != E) std::abort();
  for (int64_t k = 0; k < E; ++k) {
    if (ids[k] != order[k] || sources[k] != src[order[k]]) std::abort();
    const int64_t d = dst[order[k]];
    if (!(offsets[d] <= k && k < offsets[d + 1])) std::abort();
  }
  if (!w.empty()) {
    const auto cw = g.edge_weight().to_host_vector();
    for (int64_t k = 0; k < E; ++k)
      if (cw[k] != w[order[k]]) std::abort();
  }
  // The transposed CSR holds every edge once, grouped by source.
  const auto& t = g.transposed();
  const auto toff = t.offsets.to_host_vector();
  const auto tid = t.edge_ids.to_host_vector();
  if (toff[0] != 0 || toff[n] != E) std::abort();
  std::vector<char> seen(static_cast<size_t>(E), 0);
  for (int64_t u = 0; u < n; ++u) {
    for (int64_t k = toff[u]; k < toff[u + 1]; ++k) {
      if (sources[tid[k]] != u || seen[tid[k]]) std::abort();
      seen[tid[k]] = 1;
    }
  }
  // Derived graphs and degrees must not fail on a valid graph.
  const auto in = g.in_degree(true).to_host_vector();
  const auto out = g.out_degree().to_host_vector();
  double in_sum = 0, out_sum = 0;
  for (float x : in) in_sum += x;
  for (float x : out) out_sum += x;
  if (w.empty() && (in_sum != static_cast<double>(E) || out_sum != static_cast<double>(E))) std::abort();
  const Graph loops = g.with_self_loops(1.0f);
  if (loops.num_edges() < E || loops.num_edges() > E + n) std::abort();
  (void)g.gcn_normalized(true, 1.0f);
  (void)g.gcn_normalized(false, 2.0f);
  // from_csr on the graph's own CSR gives the same graph.
  const std::vector<float> cw = g.has_edge_weight() ? g.edge_weight().to_host_vector() : std::vector<float>{};
  const Graph again = Graph::from_csr(offsets, sources, cw);
  if (again.destinations().to_host_vector() != g.destinations().to_host_vector()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  Reader in(data, size);
  const uint8_t mode = in.take<uint8_t>();
  int64_t n = in.take<int64_t>();
  // Large valid node counts cost O(n) memory by design; keep them small.
  if (!(mode & 1) || (n > (int64_t{1} << 16) && n < (int64_t{1} << 31)))
    n = static_cast<int64_t>(static_cast<uint64_t>(n) % 64);
  const bool wide = mode & 2, weighted = mode & 4, mismatch = mode & 8;
  std::vector<int64_t> src, dst;
  std::vector<float> w;
  while (in.has(wide ? 16 : 2) && src.size() < 4096) {
    src.push_back(wide ? in.take<int64_t>() : in.take<int8_t>());
    dst.push_back(wide ? in.take<int64_t>() : in.take<int8_t>());
    if (weighted) {
      if (!in.has(sizeof(float))) break;
      w.push_back(in.take<float>());
    }
  }
  if (weighted) {
    src.resize(w.size());
    dst.resize(w.size());
  }
  if (mismatch && !dst.empty()) dst.pop_back();

  const bool valid = valid_input(src, dst, n, w);
  try {
    const Graph g = Graph::from_coo(src, dst, n, w);
    if (!valid) std::abort();  // accepted invalid input
    check_graph(g, src, dst, n, w);
  } catch (const std::invalid_argument&) {
    if (valid) std::abort();  // refused valid input
  }
  // from_csr on the raw bytes' edges read as a CSR (offsets from the sources, ids from the destinations).
  if (!src.empty()) {
    std::vector<int64_t> offsets(src.begin(), src.end());
    std::vector<int32_t> sources;
    for (int64_t d : dst) sources.push_back(static_cast<int32_t>(d));
    try {
      const Graph g = Graph::from_csr(offsets, sources, mismatch ? std::vector<float>{} : w);
      if (g.num_edges() != static_cast<int64_t>(sources.size())) std::abort();
    } catch (const std::invalid_argument&) {
    }
  }
  return 0;
}
