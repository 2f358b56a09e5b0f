// MiniBatchSAGE: one SAGEConv stack, run on sampled blocks or on the full graph.
#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/minibatch_sage.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

MiniBatchSAGE::MiniBatchSAGE(const ModelConfig& c, Generator& generator, Device device) : config_(c) {
  EW_REQUIRE(c.layers >= 1, "MiniBatchSAGE: layers (", c.layers, ") must be >= 1");
  EW_REQUIRE(c.in_features > 0 && c.out_features > 0 && c.hidden_features > 0, "MiniBatchSAGE: feature sizes in ",
             c.in_features, ", hidden ", c.hidden_features, ", out ", c.out_features, " must be positive");
  EW_REQUIRE(c.dropout >= 0.0f && c.dropout < 1.0f, "MiniBatchSAGE: dropout (", c.dropout, ") must lie in [0, 1)");
  SAGEConvOptions o;
  o.aggregator = c.sage_aggregator;
  o.normalize = c.sage_normalize;
  o.aggregation = c.aggregation;
  for (int64_t l = 0; l < c.layers; ++l) {
    const int64_t in = l == 0 ? c.in_features : c.hidden_features;
    const int64_t out = l + 1 == c.layers ? c.out_features : c.hidden_features;
    convs_.push_back(std::make_unique<SAGEConv>(in, out, generator, o, device));
  }
}

Variable MiniBatchSAGE::forward(const Graph& graph, const NodeFeatures& x, Generator& generator) {
  Variable h = x.is_sparse()
                   ? convs_[0]->forward(graph, sparse_dropout(x.sparse, config_.dropout, training(), generator))
                   : convs_[0]->forward(graph, dropout(Variable(x.dense), config_.dropout, training(), generator));
  for (size_t l = 1; l < convs_.size(); ++l) {
    h = dropout(relu(h), config_.dropout, training(), generator);
    h = convs_[l]->forward(graph, h);
  }
  return h;
}

Variable MiniBatchSAGE::forward(const MiniBatch& batch, const NodeFeatures& x, Generator& generator) {
  EW_REQUIRE(batch.num_layers() == num_layers(), "MiniBatchSAGE: the minibatch has ", batch.num_layers(),
             " blocks for ", num_layers(), " layers");
  const Block& first = batch.blocks.front();
  EW_REQUIRE(x.rows() == first.num_src, "MiniBatchSAGE: x has ", x.rows(), " rows for ", first.num_src,
             " input nodes");
  // Each layer computes all its source rows (a block's graph is square over them) and
  // keeps the destination rows, which are the next block's sources.
  Variable h = x.is_sparse()
                   ? convs_[0]->forward(first.graph, sparse_dropout(x.sparse, config_.dropout, training(), generator))
                   : convs_[0]->forward(first.graph,
                                        dropout(Variable(x.dense), config_.dropout, training(), generator));
  h = block_dst_rows(h, first);
  for (size_t l = 1; l < convs_.size(); ++l) {
    h = dropout(relu(h), config_.dropout, training(), generator);
    h = block_dst_rows(convs_[l]->forward(batch.blocks[l].graph, h), batch.blocks[l]);
  }
  return h;
}

NamedParameters MiniBatchSAGE::named_parameters() const {
  NamedParameters named;
  for (size_t l = 0; l < convs_.size(); ++l) append_named_parameters(named, "convs." + std::to_string(l), *convs_[l]);
  return named;
}

std::vector<Variable> MiniBatchSAGE::parameters() const { return parameter_values(named_parameters()); }

std::string MiniBatchSAGE::describe() const {
  std::string s = "minibatch-sage[";
  for (size_t l = 0; l < convs_.size(); ++l) s += (l ? ", " : "") + convs_[l]->describe();
  return s + "], dropout " + std::to_string(config_.dropout);
}

}  // namespace edgewise::gnn
