// Minibatch GraphSAGE with neighbour sampling (NeighborSampler blocks, full-batch
// evaluation): prints epoch, loss, accuracies and batches/s.
//   minibatch_sage [dataset=auto] [epochs=50] [batch=32] [fanouts=10,25] [seeds=shuffle|loss] [device=cpu]
// dataset: a name in the data directory (cora, citeseer, ...), a path, 'synthetic', or
// 'auto' (cora when $EDGEWISE_DATA_DIR has it, else the synthetic graph).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "edgewise/gnn/dataset_spec.hpp"
#include "edgewise/gnn/minibatch_trainer.hpp"

namespace {

int run(int argc, char** argv) {
  using namespace edgewise;
  using namespace edgewise::gnn;
  auto arg = [&](int i, const char* fallback) { return std::string(argc > i ? argv[i] : fallback); };
  const std::string spec = arg(1, "auto");
  MiniBatchTrainerOptions options;
  options.epochs = std::stoll(arg(2, "50"));
  options.batch_size = std::stoll(arg(3, "32"));
  options.fanouts.clear();
  std::stringstream fanouts(arg(4, "10,25"));
  for (std::string f; std::getline(fanouts, f, ',');) options.fanouts.push_back(std::stoll(f));
  options.seed_order = arg(5, "shuffle") == "loss" ? SeedOrder::LossPrioritized : SeedOrder::Shuffle;
  const Device device = Device::parse(arg(6, "cpu"));

  const ResolvedDataset dataset = load_dataset_spec(spec);
  std::printf("%s\n", dataset.description.c_str());
  const TrainData data = prepare(dataset.dataset, device);

  // GraphSAGE as in PyG's examples: mean aggregator, 2 layers (one per fanout), hidden 64.
  ModelConfig config;
  config.in_features = data.features.cols();
  config.hidden_features = 64;
  config.out_features = data.num_classes;
  config.layers = static_cast<int64_t>(options.fanouts.size());
  config.dropout = 0.5f;
  Generator generator(options.seed);
  MiniBatchSAGE model(config, generator, device);
  std::printf("%s on %s: %lld nodes, %lld edges, %lld training nodes, batch %lld, fanouts",
              model.describe().c_str(), data.name.c_str(), static_cast<long long>(data.graph.num_nodes()),
              static_cast<long long>(data.graph.num_edges()), static_cast<long long>(data.train_idx.numel()),
              static_cast<long long>(options.batch_size));
  for (int64_t f : options.fanouts) std::printf(" %lld", static_cast<long long>(f));
  std::printf(" (the last samples the seeds' neighbours)\n");

  MiniBatchTrainer trainer(model, data, options);
  const MiniBatchTrainResult r = trainer.fit();
  std::printf("best epoch %lld: valid %.3f  test %.3f  |  %lld batches/epoch, %.1f batches/s (median), "
              "%.0f%% of training time sampling\n",
              static_cast<long long>(r.best_epoch), r.best_valid_acc, r.test_acc,
              static_cast<long long>(r.batches_per_epoch), r.batches_per_second, 100.0 * r.sampling_fraction);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    std::printf("usage: minibatch_sage [dataset=auto] [epochs=50] [batch=32] [fanouts=10,25] [seeds=shuffle|loss] "
                "[device=cpu]\n");
    return 0;
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minibatch_sage: %s\n", e.what());
    return 1;
  }
}
