// GCNConv (Kipf & Welling 2017): out = Â (x W) + b, Â = D^-1/2 (A + I) D^-1/2.
// Semantics equal PyG's GCNConv defaults: Glorot weights, zero bias added after
// propagation, add_remaining_self_loops with fill 1 (2 with `improved`), symmetric
// normalisation with the weighted in-degree.
// Order: Â (x W) and (Â x) W are the same product; the narrower side is propagated
// (DGL's GraphConv rule). x is transformed first when in_features > out_features,
// or when they are equal and x requires grad (either order then costs one
// propagation forward and one backward), and propagated first otherwise: with
// in <= out and an x that needs no gradient (a first layer) the backward then needs
// no propagation at all (dW = (Â x)^T dOut), which saves a sparse pass per step.
// Results agree to float rounding, not bit for bit, with the other order.
// `cached` keeps the normalised graph for the Graph it was computed for (PyG keeps
// the first graph it saw even if another is passed; we recompute on a new Graph).
// The cache is keyed by Graph::id(), never by an address, and guarded by a mutex,
// so concurrent forward calls on one layer are safe.
#pragma once

#include <cstdint>
#include <mutex>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

struct GCNConvOptions {
  bool add_self_loops = true;
  bool normalize = true;
  bool improved = false;
  bool cached = true;
  bool bias = true;
  AggregationOptions aggregation{};  // op must stay Sum
};

class GCNConv : public Module {
 public:
  GCNConv(int64_t in_features, int64_t out_features, Generator& generator, GCNConvOptions options = {},
          Device device = Device::cpu());
  Variable forward(const Graph& graph, const Variable& x) const;
  // Sparse input (first layer): x W by spmm, then propagation.
  Variable forward(const Graph& graph, const SparseTensor& x) const;

  // The propagation graph (normalised Â, or the graph itself with normalize off).
  Graph propagation_graph(const Graph& graph) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;
  std::string describe() const override;
  const Variable& weight() const { return weight_; }

 private:
  Variable propagate(const Graph& graph, const Variable& xw) const;

  GCNConvOptions options_;
  Variable weight_, bias_;
  mutable std::mutex cache_mutex_;
  mutable uint64_t cached_for_ = 0;  // Graph::id() of the graph cached_graph_ was built from; 0: none
  mutable Graph cached_graph_;
};

}  // namespace edgewise::gnn
