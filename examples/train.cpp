// edgewise-train: full-batch node classification (GCN, GraphSAGE, GIN or GAT) on an npz
// dataset or the built-in synthetic graph, with progress, metrics and a plot.
//   edgewise-train [--dataset cora|PATH|synthetic] [--model gcn|sage|gin|gat] [--runs N] ...
//   edgewise-train --help   for every flag.
// Exit status: 0 done, 2 bad flags (before anything is loaded), 1 any other failure
// (the message names the file, key, flag or epoch).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgewise/cli/flags.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/dataset.hpp"
#include "edgewise/gnn/dataset_spec.hpp"
#include "edgewise/gnn/models.hpp"
#include "edgewise/gnn/reorder.hpp"
#include "edgewise/gnn/trainer.hpp"

namespace {

using namespace edgewise;
using namespace edgewise::gnn;

// Every flag's value, initialised to its default.
struct Flags {
  std::string dataset = "auto", data_dir, model = "gcn";
  int64_t layers = 2, hidden = 16;
  float dropout = 0.5f, lr = 0.01f, weight_decay = 5e-4f;
  std::string optimizer = "adam";
  int64_t epochs = 200, patience = 0;
  std::string select = "best-valid";
  uint64_t seed = 0;
  int64_t runs = 1;
  std::string device = "cpu", aggregation = "auto", form = "fused", features = "auto";
  std::string reorder = "none";
  bool normalize_features = true;
  std::string sage_aggr = "mean";
  bool deterministic = false;
  std::string nonfinite = "error";
  int64_t log_every = 10;
  std::string json, metrics, plot;
  std::string checkpoint, resume;
  int64_t checkpoint_every = 0;
  int64_t synthetic_nodes = 2708;
  int64_t heads = 8, output_heads = 1;
  float attention_dropout = 0.6f;
  std::set<std::string> given;  // flags set on the command line (the others keep the model's defaults)
  bool has(const std::string& flag) const { return given.count(flag) > 0; }
};

// One line per flag: a new flag is a field above and a line here.
void add_flags(CLI::App& app, Flags& f) {
  using namespace edgewise::cli;
  constexpr RealRange kPositive{.min = 0, .min_inclusive = false};
  constexpr RealRange kNonNegative{.min = 0};
  add_text(app, "--dataset", f.dataset,
           "dataset name in the data dir (cora, citeseer, amazon_photo, coauthor_cs), a path to an .npz (OGB, "
           "gnn-benchmark or scipy.sparse), an OGB raw dataset folder or an edge-list file, 'synthetic' "
           "(planted partition), 'rmat:N:E:F[:K]' (R-MAT, F features, K classes), or 'auto' (cora when found, else "
           "synthetic)");
  add_text(app, "--data-dir", f.data_dir,
           "where dataset names are looked up (default: $EDGEWISE_DATA_DIR, else ~/.cache/edgewise/datasets)");
  add_choice(app, "--model", f.model,
             "model; gat defaults to Velickovic et al.'s recipe (8 heads x 8 hidden, ELU, dropout 0.6 on inputs "
             "and attention, lr 0.005, weight decay 5e-4, 1 output head, up to 1000 epochs with patience 100) "
             "wherever the flags are not given",
             {"gcn", "sage", "graphsage", "gin", "gat"});
  add_int(app, "--heads", f.heads, "GAT: attention heads of the hidden layers", 1);
  add_int(app, "--output-heads", f.output_heads, "GAT: attention heads of the output layer (averaged)", 1);
  add_real(app, "--attention-dropout", f.attention_dropout, "GAT: dropout on the attention coefficients",
           {.min = 0, .max = 1, .max_inclusive = false});
  add_int(app, "--layers", f.layers, "number of graph convolutions", 1);
  add_int(app, "--hidden", f.hidden, "hidden features", 1);
  add_real(app, "--dropout", f.dropout, "dropout probability (input and between layers)",
           {.min = 0, .max = 1, .max_inclusive = false});
  add_real(app, "--lr", f.lr, "learning rate", kPositive);
  add_real(app, "--weight-decay", f.weight_decay, "weight decay (GCN: first layer only, as Kipf & Welling)",
           kNonNegative);
  add_choice(app, "--optimizer", f.optimizer, "optimizer", {"adam", "adamw", "sgd"});
  add_int(app, "--epochs", f.epochs, "training epochs", 1);
  add_int(app, "--patience", f.patience, "early stopping: epochs without a better validation accuracy (0: off)", 0);
  add_choice(app, "--select", f.select,
             "reported model: best-valid (highest validation accuracy) or last (final epoch)", {"best-valid", "last"});
  add_uint64(app, "--seed", f.seed, "seed of the first run (run i uses seed + i)");
  add_int(app, "--runs", f.runs, "independent runs (mean and std of the metrics are reported)", 1);
  add_device(app, "--device", f.device, "device to train on");
  add_choice(app, "--aggregation", f.aggregation, "aggregation strategy", {"auto", "segment", "scatter"});
  add_choice(app, "--reorder", f.reorder,
             "relabel the nodes for locality before training: none, degree (descending in-degree) or rcm (reverse "
             "Cuthill-McKee); accuracies are unaffected (up to float reassociation)",
             {"none", "degree", "rcm"});
  add_choice(app, "--form", f.form,
             "message form: fused (spmm), materialized ([E, C] messages) or auto (with --aggregation auto, the "
             "cost model measured on this machine picks form and strategy)",
             {"fused", "materialized", "auto"});
  add_choice(app, "--features", f.features, "node features as auto, dense or sparse (CSR)",
             {"auto", "dense", "sparse"});
  add_bool(app, "--normalize-features", f.normalize_features, "row-normalise features (PyG's NormalizeFeatures)");
  add_choice(app, "--sage-aggr", f.sage_aggr, "GraphSAGE aggregator (max: max-pool)", {"mean", "sum", "max"});
  add_bool(app, "--deterministic", f.deterministic, "1: only bitwise-reproducible aggregation paths");
  add_choice(app, "--nonfinite", f.nonfinite,
             "a NaN or infinite training loss: error (stop, exit 1, naming the epoch) or warn (go on)",
             {"error", "warn"});
  add_int(app, "--log-every", f.log_every, "progress line every N epochs (0: quiet)", 0);
  add_output_path(app, "--json", f.json,
                  "write final metrics (test_acc_mean, test_acc_std, valid_acc_mean, epoch_ms_median, runs, ...)");
  add_output_path(app, "--metrics", f.metrics, "write the per-epoch log of the first run (JSON if FILE ends in .json, "
                                              "else CSV)");
  add_output_path(app, "--plot", f.plot, "write the training curves of the first run as SVG");
  add_output_path(app, "--checkpoint", f.checkpoint,
                  "write a checkpoint (.npz: parameters, optimizer, RNG, history) after the last epoch and every "
                  "--checkpoint-every epochs; written atomically");
  add_int(app, "--checkpoint-every", f.checkpoint_every, "checkpoint every N epochs (0: only after the last)", 0);
  add_text(app, "--resume", f.resume,
           "continue the run saved in this checkpoint up to --epochs in total (same flags otherwise); the result "
           "equals the uninterrupted run's bit for bit")
      ->check(CLI::ExistingFile);
  add_int(app, "--synthetic-nodes", f.synthetic_nodes, "synthetic graph: nodes", 1);
}

// Checks between flags, before any data is loaded; returns the message of the first violation.
std::optional<std::string> check_flag_combinations(const Flags& f) {
  if ((!f.checkpoint.empty() || !f.resume.empty()) && f.runs != 1)
    return "--checkpoint / --resume hold one run: use --runs 1 (got " + std::to_string(f.runs) + ")";
  if (f.checkpoint_every > 0 && f.checkpoint.empty()) return "--checkpoint-every needs --checkpoint FILE";
  return std::nullopt;
}

Dataset load(const Flags& f, std::string& source) {
  if (!f.data_dir.empty()) setenv("EDGEWISE_DATA_DIR", f.data_dir.c_str(), 1);
  ResolvedDataset r = load_dataset_spec(f.dataset, f.synthetic_nodes);
  source = r.description;
  return std::move(r.dataset);
}

// Statistics over the runs (there is always at least one: --runs >= 1).
double mean(const std::vector<double>& v) {
  return v.empty() ? std::nan("") : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}
double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int train(const Flags& f) {
  const Device device = Device::parse(f.device);
  std::string source;
  Dataset dataset = load(f, source);
  // Test accuracy is what this program reports: without test nodes it would print 0 %.
  if (dataset.test_idx.empty())
    throw std::invalid_argument("dataset '" + dataset.name + "' has no test nodes (test_idx is missing or empty)" +
                                (f.dataset == "synthetic" ? "; use more --synthetic-nodes" : "") +
                                (dataset.note.empty() ? "" : "; " + dataset.note));
  if (const Ordering ordering = parse_ordering(f.reorder); ordering != Ordering::None) {
    const auto start = std::chrono::steady_clock::now();
    const int64_t before = bandwidth(dataset.src(), dataset.dst());
    const NodePermutation permutation = node_ordering(dataset.num_nodes, dataset.src(), dataset.dst(), ordering);
    dataset = reorder_dataset(dataset, permutation);
    std::printf("reordered the nodes (%s) in %.2f s; bandwidth %lld -> %lld\n", to_string(ordering),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                static_cast<long long>(before), static_cast<long long>(bandwidth(dataset.src(), dataset.dst())));
  }
  PrepareOptions prep;
  prep.features = parse_feature_format(f.features);
  prep.normalize_features = f.normalize_features;
  TrainData data = prepare(dataset, device, prep);
  std::printf("edgewise-train: %s — %lld nodes, %lld edges, %lld features (%s), %lld classes, splits %lld/%lld/%lld, "
              "device %s\n",
              source.c_str(), static_cast<long long>(dataset.num_nodes), static_cast<long long>(dataset.num_edges()),
              static_cast<long long>(data.features.cols()), data.features.is_sparse() ? "sparse CSR" : "dense",
              static_cast<long long>(dataset.num_classes), static_cast<long long>(dataset.train_idx.size()),
              static_cast<long long>(dataset.valid_idx.size()), static_cast<long long>(dataset.test_idx.size()),
              device.str().c_str());

  const ModelKind kind = parse_model_kind(f.model);
  const bool gat = kind == ModelKind::Gat;
  ModelConfig config = gat ? default_model_config(kind) : ModelConfig{};
  config.kind = kind;
  config.in_features = data.features.cols();
  if (!gat || f.has("--hidden")) config.hidden_features = f.hidden;
  config.out_features = data.num_classes;
  config.layers = f.layers;
  if (!gat || f.has("--dropout")) config.dropout = f.dropout;
  config.gat_heads = f.heads;
  config.gat_output_heads = f.output_heads;
  config.attention_dropout = f.attention_dropout;
  config.sage_aggregator = parse_sage_aggregator(f.sage_aggr);
  config.aggregation.strategy = parse_strategy(f.aggregation);
  config.aggregation.form = f.form == "materialized" ? MessageForm::Materialized
                            : f.form == "auto"       ? MessageForm::Auto
                                                     : MessageForm::Fused;
  set_deterministic(f.deterministic);

  std::vector<double> test, valid, train, epoch_ms, seconds;
  TrainResult first_run;
  reset_peak_memory(device);
  const std::size_t baseline_bytes = memory_stats(device).current_bytes;
  for (int64_t r = 0; r < f.runs; ++r) {
    const uint64_t seed = f.seed + static_cast<uint64_t>(r);
    Generator generator(seed);
    auto model = make_model(config, generator, device);
    if (r == 0) std::printf("model: %s, %lld parameters\n", model->describe().c_str(),
                            static_cast<long long>(model->num_parameters()));
    TrainerOptions options;
    options.epochs = f.epochs;
    options.lr = f.lr;
    options.weight_decay = f.weight_decay;
    if (gat) {  // the paper's schedule where the flags leave it open
      if (!f.has("--epochs")) options.epochs = 1000;
      if (!f.has("--lr")) options.lr = 0.005f;
    }
    options.optimizer = parse_optimizer(f.optimizer);
    options.patience = gat && !f.has("--patience") ? 100 : f.patience;
    options.selection = parse_model_selection(f.select);
    options.seed = seed;
    options.log_every = r > 0 ? 0 : f.log_every;
    options.nonfinite_loss = parse_nonfinite_loss(f.nonfinite);
    options.checkpoint_path = f.checkpoint;
    options.checkpoint_every = f.checkpoint_every;
    options.resume_path = f.resume;
    // The output files are written below, after the summary, so that a failed
    // write never loses the results.
    Trainer trainer(*model, data, options);
    TrainResult result = trainer.fit();
    test.push_back(result.test_acc);
    valid.push_back(result.best_valid_acc);
    train.push_back(result.train_acc);
    epoch_ms.push_back(result.epoch_ms_median);
    seconds.push_back(result.total_seconds);
    std::printf("run %lld/%lld (seed %llu): test %.2f %%  valid %.2f %%  (best epoch %lld)  %.3f ms/epoch  %.2f s\n",
                static_cast<long long>(r + 1), static_cast<long long>(f.runs), static_cast<unsigned long long>(seed),
                100 * result.test_acc, 100 * result.best_valid_acc, static_cast<long long>(result.best_epoch),
                result.epoch_ms_median, result.total_seconds);
    if (r == 0) first_run = std::move(result);
  }
  const double ms_median = median(epoch_ms);
  std::printf("\n%s on %s: test accuracy %.2f ± %.2f %% over %lld run(s) (valid %.2f %%), %.3f ms/epoch (median), "
              "%.2f s per run\n",
              to_string(config.kind), dataset.name.c_str(), 100 * mean(test), 100 * stddev(test),
              static_cast<long long>(f.runs), 100 * mean(valid), ms_median, mean(seconds));
  const double peak_mb = static_cast<double>(memory_stats(device).peak_bytes - baseline_bytes) / 1e6;
  std::printf("peak memory during training (beyond the loaded data): %.1f MB on %s\n", peak_mb, device.str().c_str());
  std::fflush(stdout);

  if (!f.metrics.empty()) {
    if (ends_with(f.metrics, ".json")) {
      write_metrics_json(f.metrics, first_run);
    } else {
      write_metrics_csv(f.metrics, first_run.history);
    }
    std::printf("per-epoch metrics: %s\n", f.metrics.c_str());
  }
  if (!f.plot.empty()) {
    write_training_curves_svg(f.plot, first_run.history, dataset.name);
    std::printf("training curves: %s\n", f.plot.c_str());
  }
  if (!f.json.empty()) {
    nlohmann::ordered_json out = {{"dataset", dataset.name},
                                  {"model", to_string(config.kind)},
                                  {"device", device.str()},
                                  {"runs", f.runs},
                                  {"test_acc_mean", mean(test)},
                                  {"test_acc_std", stddev(test)},
                                  {"valid_acc_mean", mean(valid)},
                                  {"train_acc_mean", mean(train)},
                                  {"epoch_ms_median", ms_median},
                                  {"seconds_per_run", mean(seconds)},
                                  {"peak_training_memory_mb", peak_mb},
                                  {"form", f.form},
                                  {"reorder", f.reorder},
                                  {"test_acc", test}};
    cli::write_json_file(f.json, out);
    std::printf("final metrics: %s\n", f.json.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Full-batch node classification (GCN, GraphSAGE or GIN) with progress, metrics and a plot.",
               "edgewise-train");
  Flags flags;
  add_flags(app, flags);
  if (const std::optional<int> exit_code = edgewise::cli::parse(app, argc, argv)) return *exit_code;
  for (const CLI::Option* option : app.get_options())
    if (option->count() > 0) flags.given.insert(option->get_name());
  if (const std::optional<std::string> error = check_flag_combinations(flags)) {
    std::fprintf(stderr, "edgewise-train: error: %s\n", error->c_str());
    return 2;
  }
  try {
    return train(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-train: %s\n", e.what());
    return 1;
  }
}
