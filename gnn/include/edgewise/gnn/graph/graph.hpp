// Graph: a directed graph in CSR form by destination, built from a COO edge list.
//
// Construction sorts the edges by destination (sort_by_key, stable, so edges into
// one node keep their input order), builds the offsets with offsets_from_keys, and
// keeps the edge permutation: edge_ids()[k] is the input (COO) position of CSR
// edge k, so per-edge data given in input order follows the edges. The transposed
// CSR (by source), needed by backward passes, is built on first use. Construction,
// the transposed CSR, degrees and the derived graphs run on the graph's device (the
// device the edges are on), on the engine's stream (stream.hpp). Construction
// validates everything once (ids in [0, N), weight count, finite weights); kernels
// trust the graph afterwards. Node ids are stored as int32 (N < 2^31); offsets and
// edge positions are int64. A Graph is cheap to copy (shared, immutable storage).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "edgewise/gnn/tensor/tensor.hpp"
#include "edgewise/kernels/common/buffer.hpp"

namespace edgewise::gnn {

struct TransposedCsr {
  Buffer<int64_t> offsets;       // [N + 1]: transposed edges of source u are [offsets[u], offsets[u+1])
  Buffer<int32_t> destinations;  // [E]: destination of each transposed edge
  Buffer<int64_t> edge_ids;      // [E]: the forward CSR position of each transposed edge
};

enum class Ordering : int;  // reorder.hpp
struct ReorderedGraph;      // reorder.hpp

class Graph {
 public:
  Graph() = default;

  // From COO edges src[e] -> dst[e] (int64 views on one device, where the graph is
  // built and stays), with optional per-edge weights [E] in the same order. Throws
  // std::invalid_argument on ids outside [0, num_nodes), mismatched lengths or
  // devices, or non-finite weights.
  static Graph from_coo(VectorView<const int64_t> src, VectorView<const int64_t> dst, int64_t num_nodes,
                        VectorView<const float> edge_weight = {});
  static Graph from_coo(const std::vector<int64_t>& src, const std::vector<int64_t>& dst, int64_t num_nodes,
                        const std::vector<float>& edge_weight = {});
  // From edge_index [2, E] (row 0 = source, row 1 = destination), PyG's layout.
  static Graph from_edge_index(const IndexTensor& edge_index, int64_t num_nodes, const Tensor& edge_weight = Tensor());
  // From a CSR by destination that is already built (host data): offsets [N + 1]
  // (offsets[0] == 0, nondecreasing, offsets[N] == E), sources [E] in [0, N), optional
  // edge weights [E] (finite), placed on `device`. No sort: CSR edge k is input edge k
  // (edge_ids() is the identity). Throws std::invalid_argument naming the first bad
  // position. Samplers build their blocks this way (graph_from_csr.cpp).
  static Graph from_csr(std::span<const int64_t> offsets, std::span<const int32_t> sources,
                        std::span<const float> edge_weight = {}, Device device = Device::cpu());

  bool defined() const noexcept { return impl_ != nullptr; }
  // Identifies the underlying storage (copies of a Graph share it; the storage is
  // immutable): a process-wide counter numbers each storage at construction, so an
  // id is never reused, unlike an address (a freed graph's storage may be handed to
  // the next one). Layers key caches by it; 0 for an undefined Graph.
  uint64_t id() const noexcept { return impl_ ? impl_->id : 0; }
  int64_t num_nodes() const { return impl_->num_nodes; }
  int64_t num_edges() const { return impl_->num_edges; }
  Device device() const { return impl_->device; }

  // CSR by destination.
  const Buffer<int64_t>& offsets() const { return impl_->offsets; }        // [N + 1]
  const Buffer<int32_t>& sources() const { return impl_->sources; }        // [E] source of CSR edge k
  const Buffer<int32_t>& destinations() const { return impl_->destinations; }  // [E] destination (sorted)
  const Buffer<int64_t>& edge_ids() const { return impl_->edge_ids; }      // [E] input position of CSR edge k
  bool has_edge_weight() const { return impl_->edge_weight.defined(); }
  const Tensor& edge_weight() const { return impl_->edge_weight; }         // [E, 1] in CSR order
  // Built on first use (thread-safe), then kept.
  const TransposedCsr& transposed() const;
  // Offsets [E + 1] = 0, 1, ..., E on the graph's device: every CSR edge its own
  // segment (the message form of aggregation gathers and reduces with them). Built on
  // first use (thread-safe), then kept.
  const Buffer<int64_t>& edge_offsets() const;

  // Optional edge features [E, D], kept in CSR order: row k belongs to CSR edge k, so
  // each row stays with its (source, destination) pair, duplicates included.
  // with_edge_attr takes them in the input (COO) order of the edges this graph was
  // built from (edge_ids() maps; D >= 1, finite values, else std::invalid_argument)
  // and returns the graph with them. to(), with_edge_weight() and gcn_normalized()
  // keep them; with_self_loops() gives each added loop the mean of its node's incoming
  // edges' features (PyG's fill_value "mean"; zeros for a node without any).
  bool has_edge_attr() const { return impl_->edge_attr.defined(); }
  const Tensor& edge_attr() const { return impl_->edge_attr; }  // [E, D] in CSR order
  Graph with_edge_attr(const Tensor& edge_attr_input_order) const;

  // In- and out-degree per node as float [N, 1] (edge weights summed when `weighted`).
  Tensor in_degree(bool weighted = false) const;
  Tensor out_degree(bool weighted = false) const;

  // This graph plus a self loop (weight `fill`) for every node that has none (PyG's
  // add_remaining_self_loops).
  Graph with_self_loops(float fill = 1.0f) const;
  // GCN normalisation (Kipf & Welling): A + I (remaining self loops, weight `fill`),
  // each edge weighted by w_e / sqrt(deg(src) deg(dst)), deg = weighted in-degree
  // (PyG's gcn_norm for flow source_to_target).
  Graph gcn_normalized(bool add_self_loops = true, float fill = 1.0f) const;
  // The same graph with these edge weights ([E] in CSR order).
  Graph with_edge_weight(const Tensor& weight_csr_order) const;

  // Batched edge lookup: out[i] is the CSR position (the order of sources(),
  // destinations() and edge_weight(); edge_ids()[k] maps it back to the input order)
  // of an edge src[i] -> dst[i], or -1 when there is none. With duplicate edges it
  // is the smallest such position. src and dst must have equal lengths and ids in
  // [0, num_nodes) (std::invalid_argument naming the argument and position
  // otherwise). Runs on the host; a graph on another device is refused
  // (std::invalid_argument): move it with to(Device::cpu()) first.
  std::vector<int64_t> find_edges(std::span<const int64_t> src, std::span<const int64_t> dst) const;
  // The graph with its nodes relabelled for locality and the permutation used
  // (reorder.hpp; edge weights follow their edges). Host-side, once per graph.
  ReorderedGraph reorder(Ordering ordering) const;

  // A copy on `device` (same device: this graph).
  Graph to(Device device) const;
  // Edges as COO in CSR order (src, dst) on the host — for tests and tools.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> coo() const;

 private:
  static uint64_t next_id() noexcept;
  struct Impl {
    const uint64_t id = next_id();
    int64_t num_nodes = 0;
    int64_t num_edges = 0;
    Device device{};
    Buffer<int64_t> offsets;
    Buffer<int32_t> sources;
    Buffer<int32_t> destinations;
    Buffer<int64_t> edge_ids;
    Tensor edge_weight;
    Tensor edge_attr;  // [E, D] in CSR order, or undefined
    mutable std::once_flag transposed_once;
    mutable std::unique_ptr<TransposedCsr> transposed;
    mutable std::once_flag edge_offsets_once;
    mutable Buffer<int64_t> edge_offsets;
  };
  std::shared_ptr<const Impl> impl_;
};

}  // namespace edgewise::gnn
