// gather_sources on edge_gather_sum with unit weights: forward over "one row per edge"
// offsets, backward over the transposed CSR (the graph was validated: kernels run trusted).
#include "edgewise/gnn/message_passing/edge_messages.hpp"

#include <numeric>
#include <vector>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/sddmm.hpp"
#include "tensor/engine_copy.hpp"

namespace edgewise::gnn {

namespace {

// [E, 1] ones: the weights that turn edge_gather_sum into a plain gather / sum.
Tensor unit_weights(int64_t edges, Device device) { return Tensor::full(edges, 1, 1.0f, device); }

struct GatherSourcesNode : Node {
  Graph graph;
  const char* name() const override { return "gather_sources"; }
  void backward(const Tensor& g) override {
    const TransposedCsr& t = graph.transposed();
    Tensor gx(graph.num_nodes(), g.cols(), g.device());
    // Row u of the transposed CSR lists u's outgoing edges by forward CSR position:
    // those positions are the rows of g to sum.
    edge_gather_sum<float, int64_t>(t.offsets.view(), t.edge_ids.view(), {}, unit_weights(graph.num_edges(), g.device()).cview(),
                                    g.cview(), gx.view(), trusted_context(g.device()));
    inputs[0].accumulate_grad(std::move(gx));
  }
};

}  // namespace

Variable gather_sources(const Graph& graph, const Variable& x) {
  constexpr const char* kOp = "gather_sources";
  EW_REQUIRE(graph.defined(), kOp, ": the graph is undefined");
  EW_REQUIRE(x.rows() == graph.num_nodes(), kOp, ": x has ", x.rows(), " rows but the graph has ", graph.num_nodes(),
             " nodes");
  EW_REQUIRE(x.cols() >= 1, kOp, ": x must have at least one column");
  EW_REQUIRE(x.device() == graph.device(), kOp, ": x is on ", x.device().str(), " but the graph is on ",
             graph.device().str());
  const int64_t E = graph.num_edges();
  Tensor out(E, x.cols(), x.device());
  if (E > 0) {
    std::vector<int64_t> rows(static_cast<size_t>(E + 1));
    std::iota(rows.begin(), rows.end(), int64_t{0});  // edge k is output row k
    const Buffer<int64_t> one_per_edge = upload(std::span<const int64_t>(rows), x.device());
    edge_gather_sum<float, int32_t>(one_per_edge.view(), graph.sources().view(), {}, unit_weights(E, x.device()).cview(),
                                    x.value().cview(), out.view(), engine_context(x.device()));
  }
  auto node = std::make_shared<GatherSourcesNode>();
  node->inputs = {x};
  node->graph = graph;
  return record(std::move(out), node);
}

}  // namespace edgewise::gnn
