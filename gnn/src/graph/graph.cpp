// Graph construction (sort by destination + offsets), derived graphs and transfers.
// Construction and the transposed CSR run on the CPU; to() moves a graph.
#include "edgewise/gnn/graph.hpp"

#include <atomic>
#include <cmath>
#include <numeric>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "graph/edge_attr.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "Graph";

template <class T>
std::vector<T> host_copy(VectorView<const T> v) {
  std::vector<T> h(static_cast<size_t>(v.size));
  copy_bytes(h.data(), Device::cpu(), v.data, v.device, h.size() * sizeof(T));
  return h;
}

template <class T>
Buffer<T> buffer_of(const std::vector<T>& host) {
  return Buffer<T>::from_host(std::span<const T>(host.data(), host.size()));
}

}  // namespace

uint64_t Graph::next_id() noexcept {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;  // 0 stays "no graph"
}

Graph Graph::from_coo(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t num_nodes,
                      const std::vector<float>& edge_weight) {
  return from_coo(VectorView<const int64_t>(src.data(), static_cast<int64_t>(src.size())),
                  VectorView<const int64_t>(dst.data(), static_cast<int64_t>(dst.size())), num_nodes,
                  edge_weight.empty() ? VectorView<const float>()
                                      : VectorView<const float>(edge_weight.data(),
                                                                static_cast<int64_t>(edge_weight.size())));
}

Graph Graph::from_edge_index(const IndexTensor& edge_index, int64_t num_nodes, const Tensor& edge_weight) {
  EW_REQUIRE(edge_index.rows() == 2, kOp, ": edge_index ", edge_index.shape_str(), " must be [2, E]");
  const int64_t E = edge_index.cols();
  VectorView<const int64_t> src(edge_index.data(), E, edge_index.device());
  VectorView<const int64_t> dst(edge_index.data() + E, E, edge_index.device());
  VectorView<const float> w;
  if (edge_weight.defined()) {
    EW_REQUIRE(edge_weight.numel() == E, kOp, ": edge_weight has ", edge_weight.numel(), " values for ", E,
               " edges");
    w = edge_weight.cflat();
  }
  return from_coo(src, dst, num_nodes, w);
}

Graph Graph::from_coo(VectorView<const int64_t> src_view, VectorView<const int64_t> dst_view, int64_t num_nodes,
                      VectorView<const float> weight_view) {
  EW_REQUIRE(num_nodes >= 0 && num_nodes < (int64_t{1} << 31), kOp, ": num_nodes (", num_nodes,
             ") must lie in [0, 2^31)");
  EW_REQUIRE(src_view.size == dst_view.size, kOp, ": src has ", src_view.size, " edges but dst has ",
             dst_view.size);
  EW_REQUIRE(!weight_view.present() || weight_view.size == src_view.size, kOp, ": edge_weight has ",
             weight_view.size, " values for ", src_view.size, " edges");
  const std::vector<int64_t> src = host_copy(src_view);
  const std::vector<int64_t> dst = host_copy(dst_view);
  const std::vector<float> weight = weight_view.present() ? host_copy(weight_view) : std::vector<float>{};
  const int64_t E = static_cast<int64_t>(src.size());
  for (int64_t e = 0; e < E; ++e) {
    EW_REQUIRE(src[e] >= 0 && src[e] < num_nodes, kOp, ": src[", e, "] (", src[e], ") must lie in [0, ",
               num_nodes, ")");
    EW_REQUIRE(dst[e] >= 0 && dst[e] < num_nodes, kOp, ": dst[", e, "] (", dst[e], ") must lie in [0, ",
               num_nodes, ")");
  }
  for (size_t e = 0; e < weight.size(); ++e) {
    EW_REQUIRE(std::isfinite(weight[e]), kOp, ": edge_weight[", e, "] (", weight[e], ") must be finite");
  }

  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes;
  impl->num_edges = E;
  // Sort edges by destination, stably, keeping the permutation.
  std::vector<int64_t> sorted_dst(static_cast<size_t>(E));
  std::vector<int64_t> perm(static_cast<size_t>(E));
  Context ctx;
  ctx.validate = false;  // validated above
  sort_by_key<int64_t>(VectorView<const int64_t>(dst.data(), E), VectorView<int64_t>(sorted_dst.data(), E),
                       VectorView<int64_t>(perm.data(), E), ctx);
  std::vector<int64_t> offsets(static_cast<size_t>(num_nodes + 1));
  offsets_from_keys<int64_t>(VectorView<const int64_t>(sorted_dst.data(), E),
                             VectorView<int64_t>(offsets.data(), num_nodes + 1), ctx);
  std::vector<int32_t> sources(static_cast<size_t>(E)), destinations(static_cast<size_t>(E));
  std::vector<float> csr_weight(weight.empty() ? 0 : static_cast<size_t>(E));
#pragma omp parallel for if (E > (1 << 16))
  for (int64_t k = 0; k < E; ++k) {
    sources[k] = static_cast<int32_t>(src[perm[k]]);
    destinations[k] = static_cast<int32_t>(sorted_dst[k]);
    if (!weight.empty()) csr_weight[k] = weight[perm[k]];
  }
  impl->offsets = buffer_of(offsets);
  impl->sources = buffer_of(sources);
  impl->destinations = buffer_of(destinations);
  impl->edge_ids = buffer_of(perm);
  if (!weight.empty()) impl->edge_weight = Tensor::from_host(csr_weight, E, 1);
  Graph g;
  g.impl_ = impl;
  return g.to(src_view.device);  // built on the host; moved where the edges came from
}

const TransposedCsr& Graph::transposed() const {
  std::call_once(impl_->transposed_once, [this] {
    // Built on the host, then moved: the same stable sort as construction, by source.
    Graph host = device().is_cpu() ? *this : to(Device::cpu());
    const int64_t E = num_edges(), N = num_nodes();
    const std::vector<int32_t> sources = host.sources().to_host_vector();
    const std::vector<int32_t> destinations = host.destinations().to_host_vector();
    std::vector<int32_t> sorted_src(static_cast<size_t>(E));
    std::vector<int64_t> csr_position(static_cast<size_t>(E));
    Context ctx;
    ctx.validate = false;
    sort_by_key<int32_t>(VectorView<const int32_t>(sources.data(), E), VectorView<int32_t>(sorted_src.data(), E),
                         VectorView<int64_t>(csr_position.data(), E), ctx);
    std::vector<int64_t> offsets(static_cast<size_t>(N + 1));
    offsets_from_keys<int32_t>(VectorView<const int32_t>(sorted_src.data(), E),
                               VectorView<int64_t>(offsets.data(), N + 1), ctx);
    std::vector<int32_t> t_dst(static_cast<size_t>(E));
#pragma omp parallel for if (E > (1 << 16))
    for (int64_t t = 0; t < E; ++t) t_dst[t] = destinations[csr_position[t]];
    auto t = std::make_unique<TransposedCsr>();
    t->offsets = buffer_of(offsets).to(device());
    t->destinations = buffer_of(t_dst).to(device());
    t->edge_ids = buffer_of(csr_position).to(device());
    impl_->transposed = std::move(t);
  });
  return *impl_->transposed;
}

Tensor Graph::in_degree(bool weighted) const {
  const std::vector<int64_t> off = offsets().to_host_vector();
  std::vector<float> w = weighted && has_edge_weight() ? edge_weight().to_host_vector() : std::vector<float>{};
  std::vector<float> deg(static_cast<size_t>(num_nodes()), 0.0f);
  for (int64_t v = 0; v < num_nodes(); ++v) {
    if (w.empty()) {
      deg[v] = static_cast<float>(off[v + 1] - off[v]);
    } else {
      double s = 0;
      for (int64_t k = off[v]; k < off[v + 1]; ++k) s += w[k];
      deg[v] = static_cast<float>(s);
    }
  }
  return Tensor::from_host(deg, num_nodes(), 1, device());
}

Tensor Graph::out_degree(bool weighted) const {
  const std::vector<int32_t> src = sources().to_host_vector();
  std::vector<float> w = weighted && has_edge_weight() ? edge_weight().to_host_vector() : std::vector<float>{};
  std::vector<double> deg(static_cast<size_t>(num_nodes()), 0.0);
  for (size_t k = 0; k < src.size(); ++k) deg[src[k]] += w.empty() ? 1.0 : w[k];
  std::vector<float> out(deg.begin(), deg.end());
  return Tensor::from_host(out, num_nodes(), 1, device());
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> Graph::coo() const {
  const std::vector<int32_t> s = sources().to_host_vector();
  const std::vector<int32_t> d = destinations().to_host_vector();
  return {std::vector<int64_t>(s.begin(), s.end()), std::vector<int64_t>(d.begin(), d.end())};
}

Graph Graph::with_self_loops(float fill) const {
  auto [src, dst] = coo();
  std::vector<float> w = has_edge_weight() ? edge_weight().to_host_vector() : std::vector<float>{};
  std::vector<char> has_loop(static_cast<size_t>(num_nodes()), 0);
  for (size_t k = 0; k < src.size(); ++k) {
    if (src[k] == dst[k]) has_loop[src[k]] = 1;
  }
  const bool weighted = !w.empty() || fill != 1.0f;
  if (weighted && w.empty()) w.assign(src.size(), 1.0f);
  std::vector<int64_t> added;
  for (int64_t v = 0; v < num_nodes(); ++v) {
    if (has_loop[v]) continue;
    src.push_back(v);
    dst.push_back(v);
    added.push_back(v);
    if (weighted) w.push_back(fill);
  }
  Graph g = from_coo(src, dst, num_nodes(), w);
  if (has_edge_attr()) g = g.with_edge_attr(edge_attr_with_mean_loops(*this, added));
  return g.to(device());
}

Graph Graph::gcn_normalized(bool add_self_loops, float fill) const {
  Graph g = add_self_loops ? with_self_loops(fill) : *this;
  Graph h = g.device().is_cpu() ? g : g.to(Device::cpu());
  const std::vector<float> deg = h.in_degree(/*weighted=*/true).to_host_vector();
  const std::vector<int32_t> src = h.sources().to_host_vector();
  const std::vector<int32_t> dst = h.destinations().to_host_vector();
  std::vector<float> w = h.has_edge_weight() ? h.edge_weight().to_host_vector() : std::vector<float>(src.size(), 1.0f);
  auto inv_sqrt = [](float d) { return d > 0 ? 1.0f / std::sqrt(d) : 0.0f; };
  for (size_t k = 0; k < src.size(); ++k) w[k] = inv_sqrt(deg[src[k]]) * w[k] * inv_sqrt(deg[dst[k]]);
  return h.with_edge_weight(Tensor::from_host(w, static_cast<int64_t>(w.size()), 1)).to(device());
}

Graph Graph::with_edge_weight(const Tensor& weight) const {
  EW_REQUIRE(weight.numel() == num_edges(), kOp, ": edge weights have ", weight.numel(), " values for ", num_edges(),
             " edges");
  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes();
  impl->num_edges = num_edges();
  impl->device = device();
  impl->offsets = offsets().to(device());
  impl->sources = sources().to(device());
  impl->destinations = destinations().to(device());
  impl->edge_ids = edge_ids().to(device());
  impl->edge_weight = weight.reshape(num_edges(), 1).to(device());
  if (has_edge_attr()) impl->edge_attr = edge_attr();
  Graph g;
  g.impl_ = impl;
  return g;
}

Graph Graph::to(Device target) const {
  if (target == device()) return *this;
  require_available(target, "Graph::to");
  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes();
  impl->num_edges = num_edges();
  impl->device = target;
  impl->offsets = offsets().to(target);
  impl->sources = sources().to(target);
  impl->destinations = destinations().to(target);
  impl->edge_ids = edge_ids().to(target);
  if (has_edge_weight()) impl->edge_weight = edge_weight().to(target);
  if (has_edge_attr()) impl->edge_attr = edge_attr().to(target);
  Graph g;
  g.impl_ = impl;
  return g;
}

}  // namespace edgewise::gnn
