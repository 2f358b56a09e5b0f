// Graph construction (sort by destination + offsets), derived graphs and transfers.
// Everything runs on the device the edges are on, through the kernels' primitives
// and the steps in graph_build.hpp, on the engine's stream; to() moves a graph.
#include "edgewise/gnn/graph/graph.hpp"

#include <atomic>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/offsets_from_keys.hpp"
#include "edgewise/kernels/scatter_reduce.hpp"
#include "edgewise/kernels/segment_reduce.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "graph/edge_attr.hpp"
#include "graph/graph_build.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "Graph";

// One element of a view on any device (for error messages).
template <class T>
T element_at(VectorView<const T> v, int64_t i) {
  T value{};
  copy_bytes(&value, Device::cpu(), v.data + i, v.device, sizeof(T), engine_stream(v.device));
  return value;
}

// Part [begin, begin + size) of a buffer, as a view.
template <class T>
VectorView<T> part(Buffer<T>& b, int64_t begin, int64_t size) {
  return {b.data() + begin, size, b.device()};
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
  const Device device = src_view.device;
  EW_REQUIRE(dst_view.device == device, kOp, ": src is on ", device.str(), " but dst is on ", dst_view.device.str());
  EW_REQUIRE(!weight_view.present() || weight_view.device == device, kOp, ": src is on ", device.str(),
             " but edge_weight is on ", weight_view.device.str());
  require_available(device, kOp);
  const int64_t E = src_view.size;
  const graph_build::CooErrors bad = graph_build::first_invalid(src_view, dst_view, num_nodes, weight_view);
  // The first bad edge is named, src before dst at the same edge; weights after ids.
  if (bad.src >= 0 && (bad.dst < 0 || bad.src <= bad.dst)) {
    detail::throw_invalid_argument(kOp, ": src[", bad.src, "] (", element_at(src_view, bad.src), ") must lie in [0, ",
                                   num_nodes, ")");
  }
  EW_REQUIRE(bad.dst < 0, kOp, ": dst[", bad.dst, "] (", bad.dst < 0 ? 0 : element_at(dst_view, bad.dst),
             ") must lie in [0, ", num_nodes, ")");
  EW_REQUIRE(bad.weight < 0, kOp, ": edge_weight[", bad.weight, "] (",
             bad.weight < 0 ? 0.0f : element_at(weight_view, bad.weight), ") must be finite");

  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes;
  impl->num_edges = E;
  impl->device = device;
  // Sort edges by destination, stably, keeping the permutation.
  Context& ctx = engine_context(device);  // validated above
  Buffer<int64_t> sorted_dst(E, device);
  Buffer<int64_t> perm(E, device);
  sort_by_key<int64_t>(dst_view, sorted_dst.view(), perm.view(), ctx);
  impl->offsets = Buffer<int64_t>(num_nodes + 1, device);
  offsets_from_keys<int64_t>(sorted_dst.view(), impl->offsets.view(), ctx);
  impl->sources = Buffer<int32_t>(E, device);
  impl->destinations = Buffer<int32_t>(E, device);
  graph_build::gather<int64_t, int32_t>(src_view, perm.view(), impl->sources.view());
  graph_build::gather<int64_t, int32_t>(sorted_dst.view(), {}, impl->destinations.view());
  if (weight_view.present()) {
    impl->edge_weight = Tensor(E, 1, device);
    graph_build::gather<float, float>(weight_view, perm.view(), impl->edge_weight.flat());
  }
  impl->edge_ids = std::move(perm);
  Graph g;
  g.impl_ = impl;
  return g;
}

const TransposedCsr& Graph::transposed() const {
  std::call_once(impl_->transposed_once, [this] {
    // The same stable sort as construction, by source, on the graph's device.
    const int64_t E = num_edges(), N = num_nodes();
    const Device d = device();
    Context& ctx = engine_context(d);
    Buffer<int32_t> sorted_src(E, d);
    auto t = std::make_unique<TransposedCsr>();
    t->edge_ids = Buffer<int64_t>(E, d);
    sort_by_key<int32_t>(sources().view(), sorted_src.view(), t->edge_ids.view(), ctx);
    t->offsets = Buffer<int64_t>(N + 1, d);
    offsets_from_keys<int32_t>(sorted_src.view(), t->offsets.view(), ctx);
    t->destinations = Buffer<int32_t>(E, d);
    graph_build::gather<int32_t, int32_t>(destinations().view(), t->edge_ids.view(), t->destinations.view());
    impl_->transposed = std::move(t);
  });
  return *impl_->transposed;
}

namespace {

// Per-edge values [E, 1] to sum into degrees: edge weights as double (sums as precise
// as a double accumulation) or ones as int32 (exact counts: int32 sums accumulate in int64).
template <class T>
Buffer<T> degree_values(const Graph& g) {
  Buffer<T> values(g.num_edges(), g.device());
  if constexpr (std::is_same_v<T, double>) {
    graph_build::gather<float, double>(g.edge_weight().cflat(), {}, values.view());
  } else {
    graph_build::fill<int32_t>(values.view(), 1);
  }
  return values;
}

// Degrees [N, 1] as float: `reduce` sums per-edge values of type T into [N, 1].
template <class T, class Reduce>
Tensor degrees(const Graph& g, Reduce reduce) {
  const int64_t N = g.num_nodes(), E = g.num_edges();
  const Buffer<T> values = degree_values<T>(g);
  Buffer<T> sums(N, g.device());
  reduce(MatrixView<const T>(values.data(), E, 1, g.device()), MatrixView<T>(sums.data(), N, 1, g.device()),
         engine_context(g.device()));
  Tensor out(N, 1, g.device());
  graph_build::gather<T, float>(sums.view(), {}, out.flat());
  return out;
}

// Sums over each node's CSR segment: in-edges, in a fixed order.
template <class T>
Tensor in_degrees(const Graph& g) {
  return degrees<T>(g, [&](MatrixView<const T> values, MatrixView<T> out, Context& ctx) {
    segment_reduce<T>(values, g.offsets().view(), ReduceOp::Sum, out, {}, ctx);
  });
}

// Sums scattered to each edge's source: out-edges, no transposed CSR needed.
template <class T>
Tensor out_degrees(const Graph& g) {
  return degrees<T>(g, [&](MatrixView<const T> values, MatrixView<T> out, Context& ctx) {
    scatter_reduce<T, int32_t>(values, g.sources().view(), ReduceOp::Sum, out, {}, ctx);
  });
}

}  // namespace

const Buffer<int64_t>& Graph::edge_offsets() const {
  std::call_once(impl_->edge_offsets_once, [this] {
    impl_->edge_offsets = Buffer<int64_t>(num_edges() + 1, device());
    graph_build::iota(impl_->edge_offsets.view());
  });
  return impl_->edge_offsets;
}

Tensor Graph::in_degree(bool weighted) const {
  if (weighted && has_edge_weight()) return in_degrees<double>(*this);
  // Counts are the CSR segment lengths: O(N), no pass over the edges.
  Tensor out(num_nodes(), 1, device());
  graph_build::segment_lengths(offsets().view(), out.flat());
  return out;
}

Tensor Graph::out_degree(bool weighted) const {
  return weighted && has_edge_weight() ? out_degrees<double>(*this) : out_degrees<int32_t>(*this);
}

std::pair<std::vector<int64_t>, std::vector<int64_t>> Graph::coo() const {
  const std::vector<int32_t> s = host_vector(sources().data(), num_edges(), device());
  const std::vector<int32_t> d = host_vector(destinations().data(), num_edges(), device());
  return {std::vector<int64_t>(s.begin(), s.end()), std::vector<int64_t>(d.begin(), d.end())};
}

Graph Graph::with_self_loops(float fill) const {
  const int64_t N = num_nodes(), E = num_edges();
  const Device d = device();
  Context& ctx = engine_context(d);
  // Nodes without a loop, in increasing id order: a stable sort by the has-loop flag
  // puts them first, and the offsets of the flag values count them.
  Buffer<int32_t> has_loop(N, d);
  graph_build::mark_self_loops(sources().view(), destinations().view(), has_loop.view());
  Buffer<int32_t> sorted_flags(N, d);
  Buffer<int64_t> by_flag(N, d);
  sort_by_key<int32_t>(has_loop.view(), sorted_flags.view(), by_flag.view(), ctx);
  Buffer<int64_t> flag_offsets(3, d);
  offsets_from_keys<int32_t>(sorted_flags.view(), flag_offsets.view(), ctx);
  const int64_t missing = element_at(VectorView<const int64_t>(flag_offsets.view()), 1);
  // The COO of the result: this graph's edges in CSR order, then the missing loops
  // (construction's stable sort puts each loop after its node's other in-edges).
  Buffer<int64_t> src(E + missing, d), dst(E + missing, d);
  graph_build::gather<int32_t, int64_t>(sources().view(), {}, part(src, 0, E));
  graph_build::gather<int32_t, int64_t>(destinations().view(), {}, part(dst, 0, E));
  graph_build::gather<int64_t, int64_t>(by_flag.view(), {}, part(src, E, missing));
  graph_build::gather<int64_t, int64_t>(by_flag.view(), {}, part(dst, E, missing));
  Buffer<float> weight;
  if (has_edge_weight() || fill != 1.0f) {
    weight = Buffer<float>(E + missing, d);
    if (has_edge_weight()) {
      graph_build::gather<float, float>(edge_weight().cflat(), {}, part(weight, 0, E));
    } else {
      graph_build::fill<float>(part(weight, 0, E), 1.0f);
    }
    graph_build::fill<float>(part(weight, E, missing), fill);
  }
  Graph g = from_coo(VectorView<const int64_t>(src.view()), VectorView<const int64_t>(dst.view()), N,
                     VectorView<const float>(weight.view()));  // unallocated: no weights
  if (has_edge_attr()) {
    // The added loops are by_flag[0, missing), in the order appended above.
    std::vector<int64_t> added(static_cast<size_t>(missing));
    copy_bytes(added.data(), Device::cpu(), by_flag.data(), d, added.size() * sizeof(int64_t), engine_stream(d));
    g = g.with_edge_attr(edge_attr_with_mean_loops(*this, added));
  }
  return g;
}

Graph Graph::gcn_normalized(bool add_self_loops, float fill) const {
  Graph g = add_self_loops ? with_self_loops(fill) : *this;
  const Tensor deg = g.in_degree(/*weighted=*/true);
  Tensor w(g.num_edges(), 1, g.device());
  graph_build::gcn_weights(g.sources().view(), g.destinations().view(), deg.cflat(),
                           g.has_edge_weight() ? g.edge_weight().cflat() : VectorView<const float>(), w.flat());
  return g.with_edge_weight(w);
}

Graph Graph::with_edge_weight(const Tensor& weight) const {
  EW_REQUIRE(weight.numel() == num_edges(), kOp, ": edge weights have ", weight.numel(), " values for ", num_edges(),
             " edges");
  auto impl = std::make_shared<Impl>();
  impl->num_nodes = num_nodes();
  impl->num_edges = num_edges();
  impl->device = device();
  impl->offsets = copy_of(offsets(), device());
  impl->sources = copy_of(sources(), device());
  impl->destinations = copy_of(destinations(), device());
  impl->edge_ids = copy_of(edge_ids(), device());
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
  impl->offsets = copy_of(offsets(), target);
  impl->sources = copy_of(sources(), target);
  impl->destinations = copy_of(destinations(), target);
  impl->edge_ids = copy_of(edge_ids(), target);
  if (has_edge_weight()) impl->edge_weight = edge_weight().to(target);
  if (has_edge_attr()) impl->edge_attr = edge_attr().to(target);
  Graph g;
  g.impl_ = impl;
  return g;
}

}  // namespace edgewise::gnn
