// GATConv (Veličković et al. 2018) and GATv2Conv (Brody et al. 2022) with PyG's
// semantics and parameter names.
//
// GATConv: x' = x W (lin.weight [F, H*C], no bias); per head h
//   e_ij = LeakyReLU(att_src[h] . x'_j[h] + att_dst[h] . x'_i[h]), slope negative_slope
//   alpha_ij = softmax over j in N(i) of e_ij   (edge_softmax), then dropout (training)
//   out_i[h] = sum_j alpha_ij x'_j[h]
// heads concatenated ([N, H*C]) or averaged ([N, C]), then + bias.
// GATv2Conv: x_l = x W_l + b_l, x_r = x W_r + b_r (lin_l / lin_r, with bias);
//   e_ij = att[h] . LeakyReLU(x_l_j[h] + x_r_i[h]); aggregation of x_l; params lin_l.weight,
//   lin_l.bias, lin_r.weight, lin_r.bias, att, bias.
// Weights are stored [in, out] (x W), the transpose of torch.nn.Linear's [out, in].
// Self loops: add_self_loops adds one to every node that has none (PyG first removes
// existing self loops, then adds one per node; the same on graphs without self loops).
// The graph with self loops is cached for the last Graph seen, keyed by Graph::id()
// (never reused, unlike an address) and guarded by a mutex.
// Edge weights of the graph are ignored (PyG's GATConv has no edge_dim here).
#pragma once

#include <cstdint>
#include <mutex>

#include "edgewise/gnn/graph/graph.hpp"
#include "edgewise/gnn/nn/module.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/message_passing/sparse_tensor.hpp"

namespace edgewise::gnn {

struct GATConvOptions {
  int64_t heads = 1;
  bool concat = true;           // false: mean over heads
  float negative_slope = 0.2f;
  float dropout = 0.0f;         // on the attention coefficients, in training mode only
  bool add_self_loops = true;
  bool bias = true;
};

// What GATConv and GATv2Conv share: options, the self-loop cache, heads and bias.
class GATConvBase : public Module {
 public:
  // Output features per node: heads * out_features (concat) or out_features.
  int64_t output_features() const { return options_.concat ? options_.heads * out_features_ : out_features_; }
  const GATConvOptions& options() const { return options_; }
  // The graph attention runs over (with self loops when add_self_loops).
  Graph attention_graph(const Graph& graph) const;

 protected:
  GATConvBase(int64_t in_features, int64_t out_features, GATConvOptions options, Generator& generator, Device device);
  // Softmax over incoming edges, attention dropout, aggregation of `values` [N, H*C],
  // head concat / mean, bias.
  Variable attend(const Graph& graph, const Variable& scores, const Variable& values, Generator& generator) const;

  int64_t in_features_, out_features_;
  GATConvOptions options_;
  Variable bias_;

 private:
  mutable std::mutex cache_mutex_;
  mutable uint64_t cached_for_ = 0;  // Graph::id() of the graph cached_graph_ was built from; 0: none
  mutable Graph cached_graph_;
};

class GATConv : public GATConvBase {
 public:
  GATConv(int64_t in_features, int64_t out_features, Generator& generator, GATConvOptions options = {},
          Device device = Device::cpu());
  // `generator` draws the attention-dropout mask (unused in eval mode or with dropout 0).
  Variable forward(const Graph& graph, const Variable& x, Generator& generator) const;
  // Sparse input (first layer): x W by spmm.
  Variable forward(const Graph& graph, const SparseTensor& x, Generator& generator) const;

  std::vector<Variable> parameters() const override;
  std::string describe() const override;

 private:
  Variable propagate(const Graph& graph, const Variable& xw, Generator& generator) const;
  Variable weight_, att_src_, att_dst_;
};

class GATv2Conv : public GATConvBase {
 public:
  GATv2Conv(int64_t in_features, int64_t out_features, Generator& generator, GATConvOptions options = {},
            Device device = Device::cpu());
  Variable forward(const Graph& graph, const Variable& x, Generator& generator) const;

  std::vector<Variable> parameters() const override;
  std::string describe() const override;

 private:
  Variable weight_l_, bias_l_, weight_r_, bias_r_, att_;
};

}  // namespace edgewise::gnn
