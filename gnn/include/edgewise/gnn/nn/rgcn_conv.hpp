// RGCNConv (Schlichtkrull et al. 2018), PyG semantics and parameter names:
//   out_i = x_i root + bias + sum_r aggr_{j in N_r(i)} x_j W_r
// over R relations (an edge type per edge), aggr mean by default (PyG: 'mean';
// any ReduceOp, as aggregate.hpp). Like PyG, each relation aggregates first and
// transforms after (so max / min aggregate the raw features), and a node without
// an edge of type r gets 0 from r.
// Weights (stored 2-D, row-major: PyG's tensor reshaped, the same bytes):
//   plain   weight [R * in, out]              (PyG [R, in, out])
//   bases   weight [B * in, out], comp [R, B] (PyG [B, in, out], [R, B]); W_r = sum_b comp[r, b] V_b
//   blocks  weight [R * B * in/B, out/B]      (PyG [R, B, in/B, out/B]); W_r block-diagonal
//   root    [in, out] (root_weight), bias [1, out] (bias).
// Initialisation as PyG's reset_parameters: glorot on weight (over its last two
// PyG dimensions), comp and root; zero bias.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/tensor/random.hpp"

namespace edgewise::gnn {

struct RGCNConvOptions {
  int64_t num_bases = 0;   // > 0: basis decomposition with this many bases
  int64_t num_blocks = 0;  // > 0: block-diagonal decomposition (in and out divisible by it)
  ReduceOp aggr = ReduceOp::Mean;
  bool root_weight = true;
  bool bias = true;
  AggregationOptions aggregation{};  // strategy / form; the op follows `aggr`, edge weights are ignored
};

class RGCNConv : public Module {
 public:
  // Throws std::invalid_argument naming the argument: non-positive sizes or
  // num_relations, num_bases and num_blocks both set, in or out not divisible by
  // num_blocks.
  RGCNConv(int64_t in_features, int64_t out_features, int64_t num_relations, Generator& generator,
           RGCNConvOptions options = {}, Device device = Device::cpu());

  // x [N, in] on `graph` (N nodes) with edge_type [E] in the input (COO) order the
  // graph was built from, each in [0, num_relations). Splits the graph on every call;
  // a loop that reuses the graph should split once (relation_split.hpp) and call the
  // overload below. Throws std::invalid_argument naming edge_type or x.
  Variable forward(const Graph& graph, std::span<const int64_t> edge_type, const Variable& x) const;
  // relation_graphs[r]: the edges of relation r, every graph over x.rows() nodes
  // (split_by_relation's result); exactly num_relations of them.
  Variable forward(const std::vector<Graph>& relation_graphs, const Variable& x) const;

  // W_r as [in, out], differentiable (bases combined, blocks on the diagonal).
  Variable relation_weight(int64_t r) const;

  std::vector<Variable> parameters() const override;
  NamedParameters named_parameters() const override;  // "weight", "comp", "root", "bias" (PyG's)
  std::string describe() const override;

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  int64_t num_relations() const { return num_relations_; }

 private:
  // Every W_r [in, out] for one forward (bases combined once, not once per relation).
  std::vector<Variable> relation_weights() const;

  RGCNConvOptions options_;
  int64_t in_features_, out_features_, num_relations_;
  Variable weight_, comp_, root_, bias_;  // comp_ only with bases, root_ / bias_ per options
};

}  // namespace edgewise::gnn
