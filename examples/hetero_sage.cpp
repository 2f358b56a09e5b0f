// A heterogeneous model in a hand-written C++ loop: to_hetero(GraphSAGE) as PyG
// builds it — per edge type a SAGEConv, summed per destination type (HeteroConv) —
// trained on the papers of a synthetic graph shaped like ogbn-mag (mag_like_graph),
// with reverse relations so that every node type receives messages.
// Uses the installed API only (find_package(Edgewise), edgewise::gnn).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/data/synthetic_hetero.hpp"
#include "edgewise/gnn/graph/hetero_graph_from_dataset.hpp"
#include "edgewise/gnn/nn/hetero_conv.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/tensor/ops.hpp"

namespace {

using namespace edgewise::gnn;

// One SAGEConv per edge type of the graph, in_features -> out_features.
std::shared_ptr<HeteroConv> sage_layer(const HeteroGraph& graph, int64_t in_features, int64_t out_features,
                                       Generator& generator) {
  auto conv = std::make_shared<HeteroConv>();
  for (const EdgeType& edge_type : graph.edge_types())
    conv->add(edge_type, std::make_shared<SAGEConv>(in_features, out_features, generator));
  return conv;
}

NodeFeatureMap relu_all(const NodeFeatureMap& x) {
  NodeFeatureMap out;
  for (const auto& [type, value] : x) out.emplace(type, relu(value));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  // Optional: the number of papers (default 20000); --help describes the program.
  if (argc > 2 || (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0))) {
    const bool help = argc == 2;
    std::fprintf(help ? stdout : stderr, "%susage: hetero_sage [papers]  (a 2-layer to_hetero(GraphSAGE) on a "
                 "synthetic ogbn-mag-shaped graph; papers >= 100, default 20000)\n", help ? "" : "error: ");
    return help ? 0 : 2;
  }
  MagLikeParams params;
  if (argc == 2) {
    char* end = nullptr;
    params.papers = std::strtoll(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || params.papers < 100) {
      std::fprintf(stderr, "error: papers must be an integer >= 100 (got '%s')\n", argv[1]);
      return 2;
    }
  }
  const HeteroDataset data = mag_like_graph(params, /*seed=*/7);
  const HeteroGraph graph = hetero_graph_from_dataset(data, /*add_reverse=*/true);
  NodeFeatureMap x;
  for (const NodeTypeData& type : data.node_types)
    x.emplace(type.name, Variable(Tensor::from_host(type.features, type.count, type.num_features)));
  const IndexTensor labels = IndexTensor::vector(data.labels);
  const IndexTensor train = IndexTensor::vector(data.train_idx), valid = IndexTensor::vector(data.valid_idx),
                    test = IndexTensor::vector(data.test_idx);
  std::printf("mag-shaped graph: %lld papers, %zu node types, %zu edge types with reverses, %lld classes\n",
              static_cast<long long>(params.papers), graph.node_types().size(), graph.edge_types().size(),
              static_cast<long long>(data.num_classes));

  Generator generator(0);
  const int64_t features = data.node_types.front().num_features, hidden = 64;
  auto conv1 = sage_layer(graph, features, hidden, generator);
  auto conv2 = sage_layer(graph, hidden, data.num_classes, generator);
  std::vector<Variable> parameters = conv1->parameters();
  for (const Variable& p : conv2->parameters()) parameters.push_back(p);
  AdamOptions options;
  options.lr = 0.01f;
  Adam adam(parameters, options);

  auto logits = [&]() { return conv2->forward(graph, relu_all(conv1->forward(graph, x))).at(data.target_type); };
  double best_valid = 0, test_at_best = 0;
  for (int epoch = 1; epoch <= 60; ++epoch) {
    adam.zero_grad();
    Variable loss = cross_entropy(logits(), labels, train);
    loss.backward();
    adam.step();
    NoGradGuard no_grad;
    const Tensor scores = logits().value();
    const double valid_acc = ops::accuracy(scores, labels, valid);
    if (valid_acc >= best_valid) {
      best_valid = valid_acc;
      test_at_best = ops::accuracy(scores, labels, test);
    }
    if (epoch % 10 == 0)
      std::printf("epoch %2d  loss %.4f  valid acc %.3f\n", epoch, loss.value().to_host_vector()[0], valid_acc);
  }
  std::printf("test accuracy at best validation %.3f\n", test_at_best);
  return 0;
}
