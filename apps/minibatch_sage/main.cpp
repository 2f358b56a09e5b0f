// Minibatch GraphSAGE with neighbour sampling (NeighborSampler blocks, full-batch
// evaluation): prints epoch, loss, accuracies and batches/s.
//   minibatch_sage [--dataset auto] [--epochs 50] [--batch 32] [--fanouts 10,25] [--seeds shuffle|loss]
//                  [--device cpu] [--seed 0] [--lr 0.01] [--nonfinite error|warn]
// --dataset: a name in the data directory (cora, citeseer, ...), a path, 'synthetic',
// or 'auto' (cora when $EDGEWISE_DATA_DIR has it, else the synthetic graph).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>
#include <string>

#include "edgewise/cli/flags.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"

namespace {

struct Flags {
  std::string dataset = "auto", fanouts = "10,25", seeds = "shuffle", device = "cpu", nonfinite = "error";
  int64_t epochs = 50, batch = 32;
  uint64_t seed = 0;
  float lr = 0.01f;
};

// "10,25" -> {10, 25}: each a whole integer >= 1, or -1 (every neighbour).
std::string check_fanouts(const std::string& text) {
  std::stringstream items(text);
  int count = 0;
  for (std::string item; std::getline(items, item, ',');) {
    const auto v = edgewise::cli::parse_int(item);
    if (!v || (*v < 1 && *v != -1)) return "'" + item + "' in '" + text + "' is not a fanout (an integer >= 1, or -1)";
    ++count;
  }
  if (count == 0 || text.back() == ',') return "'" + text + "' is not a comma-separated list of fanouts";
  return "";
}

void add_flags(CLI::App& app, Flags& f) {
  using namespace edgewise::cli;
  add_text(app, "--dataset", f.dataset, "dataset name, .npz path, 'synthetic' or 'auto'");
  add_int(app, "--epochs", f.epochs, "training epochs", 1);
  add_int(app, "--batch", f.batch, "seed nodes per batch", 1);
  add_text(app, "--fanouts", f.fanouts, "neighbours sampled per layer, outermost first (-1: all)")
      ->type_name("N,N,...")
      ->check(CLI::Validator(check_fanouts, ""));
  add_choice(app, "--seeds", f.seeds, "seed order: shuffled, or prioritised by loss", {"shuffle", "loss"});
  add_device(app, "--device", f.device, "device to train on");
  add_uint64(app, "--seed", f.seed, "sampling, shuffling and dropout seed");
  add_real(app, "--lr", f.lr, "learning rate (Adam)", {.min = 0, .min_inclusive = false});
  add_choice(app, "--nonfinite", f.nonfinite, "a NaN or infinite batch loss: error (stop) or warn (go on)",
             {"error", "warn"});
}

int run(const Flags& f) {
  using namespace edgewise;
  using namespace edgewise::gnn;
  MiniBatchTrainerOptions options;
  options.epochs = f.epochs;
  options.batch_size = f.batch;
  options.fanouts.clear();
  std::stringstream fanouts(f.fanouts);
  for (std::string item; std::getline(fanouts, item, ',');) options.fanouts.push_back(*cli::parse_int(item));
  options.seed_order = f.seeds == "loss" ? SeedOrder::LossPrioritized : SeedOrder::Shuffle;
  options.seed = f.seed;
  options.lr = f.lr;
  options.nonfinite_loss = parse_nonfinite_loss(f.nonfinite);
  const Device device = Device::parse(f.device);
  const std::string& spec = f.dataset;

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
  for (int64_t fanout : options.fanouts) std::printf(" %lld", static_cast<long long>(fanout));
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
  CLI::App app("Minibatch GraphSAGE with neighbour sampling and full-batch evaluation.", "minibatch_sage");
  Flags flags;
  add_flags(app, flags);
  if (const std::optional<int> exit_code = edgewise::cli::parse(app, argc, argv)) return *exit_code;
  try {
    return run(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minibatch_sage: %s\n", e.what());
    return 1;
  }
}
