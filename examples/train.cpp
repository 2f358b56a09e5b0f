// edgewise-train: full-batch node classification (GCN, GraphSAGE or GIN) on an npz
// dataset or the built-in synthetic graph, with progress, metrics and a plot.
//   edgewise-train [--dataset cora|PATH|synthetic] [--model gcn|sage|gin] [--runs N] ...
//   edgewise-train --help   for every flag.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "edgewise/gnn/dataset.hpp"
#include "edgewise/gnn/dataset_spec.hpp"
#include "edgewise/gnn/models.hpp"
#include "edgewise/gnn/trainer.hpp"

namespace {

using namespace edgewise;
using namespace edgewise::gnn;

struct Flag {
  const char* name;
  const char* value;  // default shown in --help
  const char* help;
};

const Flag kFlags[] = {
    {"dataset", "auto", "dataset name in the data dir (cora, citeseer, amazon_photo, coauthor_cs), a path to an .npz, "
                        "'synthetic' (planted partition), 'rmat:N:E:F[:K]' (R-MAT, F features, K classes), or "
                        "'auto' (cora when found, else synthetic)"},
    {"data-dir", "", "where dataset names are looked up (default: $EDGEWISE_DATA_DIR, else ~/.cache/edgewise/datasets)"},
    {"model", "gcn", "gcn, sage or gin"},
    {"layers", "2", "number of graph convolutions"},
    {"hidden", "16", "hidden features"},
    {"dropout", "0.5", "dropout probability (input and between layers)"},
    {"lr", "0.01", "learning rate"},
    {"weight-decay", "5e-4", "weight decay (GCN: first layer only, as Kipf & Welling)"},
    {"optimizer", "adam", "adam, adamw or sgd"},
    {"epochs", "200", "training epochs"},
    {"patience", "0", "early stopping: epochs without a better validation accuracy (0: off)"},
    {"select", "best-valid", "reported model: best-valid (highest validation accuracy) or last (final epoch)"},
    {"seed", "0", "seed of the first run (run i uses seed + i)"},
    {"runs", "1", "independent runs (mean and std of the metrics are reported)"},
    {"device", "cpu", "cpu, cuda or cuda:N"},
    {"aggregation", "auto", "aggregation strategy: auto, segment or scatter"},
    {"form", "fused", "message form: fused (spmm) or materialized ([E, C] messages)"},
    {"features", "auto", "node features as auto, dense or sparse (CSR)"},
    {"normalize-features", "1", "row-normalise features (PyG's NormalizeFeatures): 1 or 0"},
    {"sage-aggr", "mean", "GraphSAGE aggregator: mean, sum or max (max-pool)"},
    {"deterministic", "0", "1: only bitwise-reproducible aggregation paths"},
    {"log-every", "10", "progress line every N epochs (0: quiet)"},
    {"json", "", "write final metrics (test_acc_mean, test_acc_std, valid_acc_mean, epoch_ms_median, runs, ...)"},
    {"metrics", "", "write the per-epoch log of the first run as CSV"},
    {"plot", "", "write the training curves of the first run as SVG"},
    {"synthetic-nodes", "2708", "synthetic graph: nodes"},
};

void usage() {
  std::printf("usage: edgewise-train [--flag value]...\n");
  for (const Flag& f : kFlags) std::printf("  --%-20s %s (default: %s)\n", f.name, f.help, f.value[0] ? f.value : "none");
}

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> values;
  for (const Flag& f : kFlags) values[f.name] = f.value;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    }
    if (a.rfind("--", 0) != 0 || !values.count(a.substr(2))) {
      std::fprintf(stderr, "edgewise-train: unknown argument '%s' (see --help)\n", a.c_str());
      std::exit(2);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "edgewise-train: %s needs a value\n", a.c_str());
      std::exit(2);
    }
    values[a.substr(2)] = argv[++i];
  }
  return values;
}

Dataset load(const std::map<std::string, std::string>& f, std::string& source) {
  if (!f.at("data-dir").empty()) setenv("EDGEWISE_DATA_DIR", f.at("data-dir").c_str(), 1);
  ResolvedDataset r = load_dataset_spec(f.at("dataset"), std::stoll(f.at("synthetic-nodes")));
  source = r.description;
  return std::move(r.dataset);
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / (v.size() - 1));
}

int run(int argc, char** argv) {
  const auto f = parse(argc, argv);
  const Device device = Device::parse(f.at("device"));
  std::string source;
  Dataset dataset = load(f, source);
  PrepareOptions prep;
  prep.features = parse_feature_format(f.at("features"));
  prep.normalize_features = f.at("normalize-features") != "0";
  TrainData data = prepare(dataset, device, prep);
  std::printf("edgewise-train: %s — %lld nodes, %lld edges, %lld features (%s), %lld classes, splits %lld/%lld/%lld, "
              "device %s\n",
              source.c_str(), static_cast<long long>(dataset.num_nodes), static_cast<long long>(dataset.num_edges()),
              static_cast<long long>(data.features.cols()), data.features.is_sparse() ? "sparse CSR" : "dense",
              static_cast<long long>(dataset.num_classes), static_cast<long long>(dataset.train_idx.size()),
              static_cast<long long>(dataset.valid_idx.size()), static_cast<long long>(dataset.test_idx.size()),
              device.str().c_str());

  ModelConfig config;
  config.kind = parse_model_kind(f.at("model"));
  config.in_features = data.features.cols();
  config.hidden_features = std::stoll(f.at("hidden"));
  config.out_features = data.num_classes;
  config.layers = std::stoll(f.at("layers"));
  config.dropout = std::stof(f.at("dropout"));
  config.sage_aggregator = parse_sage_aggregator(f.at("sage-aggr"));
  config.aggregation.strategy = parse_strategy(f.at("aggregation"));
  config.aggregation.form = f.at("form") == "materialized" ? MessageForm::Materialized : MessageForm::Fused;
  set_deterministic(f.at("deterministic") != "0");

  const int runs = std::stoi(f.at("runs"));
  const uint64_t seed0 = std::stoull(f.at("seed"));
  std::vector<double> test, valid, train, epoch_ms, seconds;
  reset_peak_memory(device);
  const std::size_t baseline_bytes = memory_stats(device).current_bytes;
  for (int r = 0; r < runs; ++r) {
    Generator generator(seed0 + static_cast<uint64_t>(r));
    auto model = make_model(config, generator, device);
    if (r == 0) std::printf("model: %s, %lld parameters\n", model->describe().c_str(),
                            static_cast<long long>(model->num_parameters()));
    TrainerOptions options;
    options.epochs = std::stoll(f.at("epochs"));
    options.lr = std::stof(f.at("lr"));
    options.weight_decay = std::stof(f.at("weight-decay"));
    options.optimizer = parse_optimizer(f.at("optimizer"));
    options.patience = std::stoll(f.at("patience"));
    options.selection = parse_model_selection(f.at("select"));
    options.seed = seed0 + static_cast<uint64_t>(r);
    options.log_every = runs > 1 && r > 0 ? 0 : std::stoll(f.at("log-every"));
    if (r == 0) {
      options.metrics_csv = f.at("metrics");
      options.plot_svg = f.at("plot");
    }
    Trainer trainer(*model, data, options);
    TrainResult result = trainer.fit();
    test.push_back(result.test_acc);
    valid.push_back(result.best_valid_acc);
    train.push_back(result.train_acc);
    epoch_ms.push_back(result.epoch_ms_median);
    seconds.push_back(result.total_seconds);
    std::printf("run %d/%d (seed %llu): test %.2f %%  valid %.2f %%  (best epoch %lld)  %.3f ms/epoch  %.2f s\n", r + 1,
                runs, static_cast<unsigned long long>(seed0 + r), 100 * result.test_acc, 100 * result.best_valid_acc,
                static_cast<long long>(result.best_epoch), result.epoch_ms_median, result.total_seconds);
  }
  std::vector<double> sorted_ms = epoch_ms;
  std::sort(sorted_ms.begin(), sorted_ms.end());
  const double ms_median = sorted_ms[sorted_ms.size() / 2];
  std::printf("\n%s on %s: test accuracy %.2f ± %.2f %% over %d run(s) (valid %.2f %%), %.3f ms/epoch (median), "
              "%.2f s per run\n",
              to_string(config.kind), dataset.name.c_str(), 100 * mean(test), 100 * stddev(test), runs,
              100 * mean(valid), ms_median, mean(seconds));
  const double peak_mb = static_cast<double>(memory_stats(device).peak_bytes - baseline_bytes) / 1e6;
  std::printf("peak memory during training (beyond the loaded data): %.1f MB on %s\n", peak_mb, device.str().c_str());
  if (!f.at("plot").empty()) std::printf("training curves: %s\n", f.at("plot").c_str());
  if (!f.at("json").empty()) {
    std::ofstream out(f.at("json"));
    out << "{\"dataset\": \"" << dataset.name << "\", \"model\": \"" << to_string(config.kind)
        << "\", \"device\": \"" << device.str() << "\", \"runs\": " << runs << ", \"test_acc_mean\": " << mean(test)
        << ", \"test_acc_std\": " << stddev(test) << ", \"valid_acc_mean\": " << mean(valid)
        << ", \"train_acc_mean\": " << mean(train) << ", \"epoch_ms_median\": " << ms_median
        << ", \"seconds_per_run\": " << mean(seconds) << ", \"peak_training_memory_mb\": " << peak_mb
        << ", \"form\": \"" << f.at("form") << "\", \"test_acc\": [";
    for (size_t i = 0; i < test.size(); ++i) out << (i ? ", " : "") << test[i];
    out << "]}\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-train: %s\n", e.what());
    return 1;
  }
}
