// Writing your own training loop: a 2-layer GCN on a small synthetic graph with
// the building blocks (Graph, GCNConv, autograd, Adam) instead of the Trainer.
// Uses the installed API only, so it builds as is in a project that does
// find_package(Edgewise) and links edgewise::gnn (tests/install builds it so).
#include <cstdio>
#include <cstring>
#include <vector>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"

int main(int argc, char** argv) {
  // No flags: --help describes the program; anything else is an error (status 2).
  if (argc > 1) {
    const bool help = std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0;
    std::fprintf(help ? stdout : stderr, "%scustom_training_loop: a 2-layer GCN trained by a hand-written loop (no "
                 "Trainer) on a synthetic graph; takes no arguments\n", help ? "" : "error: ");
    return help && argc == 2 ? 0 : 2;
  }
  using namespace edgewise::gnn;
  // Data: a planted-partition graph; prepare() builds the Graph (CSR) and features.
  PlantedPartitionParams params;
  params.num_nodes = 1000;
  const TrainData data = prepare(planted_partition(params, 7), edgewise::Device::cpu());

  // Model: two GCN layers (PyG's GCN example), parameters from a seeded generator.
  Generator gen(42);
  GCNConv conv1(data.features.cols(), 16, gen), conv2(16, data.num_classes, gen);
  std::vector<Variable> params1 = conv1.parameters(), params2 = conv2.parameters();
  Adam adam({ParamGroup{params1, 5e-4f}, ParamGroup{params2, 0.0f}}, AdamOptions{});

  auto forward = [&](bool training) {
    SparseTensor x = sparse_dropout(data.features.sparse, 0.5f, training, gen);
    Variable h = dropout(relu(conv1.forward(data.graph, x)), 0.5f, training, gen);
    return conv2.forward(data.graph, h);
  };
  for (int epoch = 1; epoch <= 100; ++epoch) {
    adam.zero_grad();
    Variable loss = cross_entropy(forward(true), data.labels, data.train_idx);
    loss.backward();
    adam.step();
    if (epoch % 20 == 0) {
      NoGradGuard no_grad;
      const Tensor logits = forward(false).value();
      std::printf("epoch %3d  loss %.4f  valid acc %.3f\n", epoch, loss.value().to_host_vector()[0],
                  ops::accuracy(logits, data.labels, data.valid_idx));
    }
  }
  NoGradGuard no_grad;
  std::printf("test accuracy %.3f\n", ops::accuracy(forward(false).value(), data.labels, data.test_idx));
  return 0;
}
