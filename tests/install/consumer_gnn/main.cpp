// Uses the installed edgewise::gnn: a 2-layer GCN trained for a few epochs on a
// small built-in synthetic (planted-partition) graph; fails unless the loss fell.
#include <cstdio>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/nn/gcn_conv.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/data/synthetic.hpp"
#include "edgewise/gnn/train/trainer.hpp"

int main() {
  using namespace edgewise::gnn;
  PlantedPartitionParams params;
  params.num_nodes = 400;
  const TrainData data = prepare(planted_partition(params, 7), edgewise::Device::cpu());
  Generator gen(1);
  GCNConv conv1(data.features.cols(), 16, gen), conv2(16, data.num_classes, gen);
  std::vector<Variable> p1 = conv1.parameters(), p2 = conv2.parameters();
  Adam adam({ParamGroup{p1, 5e-4f}, ParamGroup{p2, 0.0f}}, AdamOptions{});
  float first = 0, last = 0;
  for (int epoch = 1; epoch <= 10; ++epoch) {
    adam.zero_grad();
    Variable hidden = relu(data.features.is_sparse() ? conv1.forward(data.graph, data.features.sparse)
                                                     : conv1.forward(data.graph, Variable(data.features.dense)));
    Variable loss = cross_entropy(conv2.forward(data.graph, hidden), data.labels, data.train_idx);
    loss.backward();
    adam.step();
    last = loss.value().to_host_vector()[0];
    if (epoch == 1) first = last;
  }
  std::printf("consumer_gnn: GCN loss %.4f -> %.4f over 10 epochs\n", first, last);
  return last < first ? 0 : 1;
}
