// edgewise-train: full-batch node classification (GCN, GraphSAGE, GIN or GAT) on an npz
// dataset or the built-in synthetic graph, with progress, metrics and a plot; with
// --task link, link prediction (train_link.cpp); with --task graph, k-fold GIN graph
// classification on a graph collection (run_graph_task).
//   edgewise-train [--dataset cora|PATH|synthetic] [--model gcn|sage|gin|gat] [--runs N] ...
//   edgewise-train --task graph [--dataset reddit_threads|TU_DIR|synthetic] [--folds 0,1,2|all] ...
//   edgewise-train --help   for every flag.
// Exit status: 0 done, 2 bad flags (before anything is loaded), 1 any other failure
// (the message names the file, key, flag or epoch).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgewise/cli/dataset_flags.hpp"
#include "edgewise/cli/flags.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/train/graph_classification.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/graph/reorder.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "train_link.hpp"
#if EDGEWISE_TRAIN_DISTRIBUTED
#include "edgewise/gnn/dist/trainer.hpp"
#endif

namespace {

using namespace edgewise;
using namespace edgewise::gnn;

// Every flag's value, initialised to its default.
struct Flags {
  std::string task = "node";
  int64_t hits_k = 50;
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
  bool distributed = false;  // MPI: one part per rank (train_distributed below)
  std::string parts_dir;
  uint64_t partition_seed = 0;
  std::string json, metrics, plot;
  std::string checkpoint, resume;
  int64_t checkpoint_every = 0;
  int64_t synthetic_nodes = 2708;
  int64_t heads = 8, output_heads = 1;
  float attention_dropout = 0.6f;
  // --task graph (graph classification, run_graph_task)
  std::string folds = "0,1,2", pooling = "sum", save_folds;
  int64_t num_folds = 10, batch_size = 128, threads = 1;
  bool batch_norm = false;
  cli::EdgeConventionFlags edges;  // --undirected, --self-loops
  std::set<std::string> given;  // flags set on the command line (the others keep the model's defaults)
  bool has(const std::string& flag) const { return given.count(flag) > 0; }
};

// Upper bounds of the size flags, checked while parsing (before any data is
// loaded): beyond them a run only exhausts memory. 1024 threads is far beyond any
// one machine's cores (each OpenMP thread reserves a stack and partial outputs).
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxHeads = 256;
constexpr int64_t kMaxHidden = int64_t{1} << 16;
constexpr int64_t kMaxLayers = 64;

// --task graph: graph classification (GIN, k-fold cross-validation).
std::optional<std::vector<int64_t>> parse_folds(const std::string& text) {
  if (text == "all") return std::vector<int64_t>{};
  std::vector<int64_t> folds;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::optional<int64_t> fold = cli::parse_int(std::string_view(text).substr(at, comma - at));
    if (!fold || *fold < 0 || std::find(folds.begin(), folds.end(), *fold) != folds.end()) return std::nullopt;
    folds.push_back(*fold);
    at = comma + 1;
  }
  return folds;
}

void add_graph_task_flags(CLI::App& app, Flags& f) {
  using namespace edgewise::cli;
  add_text(app, "--folds", f.folds,
           "--task graph: the test folds to run, comma-separated (valid = the next fold), or 'all' (default 0,1,2: "
           "three folds keep a run to minutes)")
      ->check(CLI::Validator(
          [](std::string& value) {
            return parse_folds(value) ? std::string() : "expected distinct fold ids >= 0 like 0,1,2 or 'all'";
          },
          "FOLDS"));
  add_int(app, "--num-folds", f.num_folds, "--task graph: folds of the cross-validation", 3);
  add_int(app, "--batch-size", f.batch_size, "--task graph: graphs per training minibatch", 1);
  add_choice(app, "--pooling", f.pooling, "--task graph: global pooling of node features per graph",
             {"sum", "mean", "max"});
  add_bool(app, "--batch-norm", f.batch_norm,
           "--task graph: BatchNorm inside each GIN MLP (default 0: reddit_threads folds 0-2 measured 76.8 % with it, "
           "77.9 % without)");
  add_int(app, "--threads", f.threads,
          "--task graph: OpenMP threads (default 1: minibatches of small graphs gain little from more, and one "
          "thread gives the same numbers on every machine and never waits on a busy core; 0: OpenMP's default; "
          "at most 1024)",
          0, kMaxThreads);
  add_output_path(app, "--save-folds", f.save_folds,
                  "--task graph: write the fold of every graph, one per line (for comparisons on identical folds)");
}

int train_graph_task(const Flags& f) {
  if (!f.data_dir.empty()) setenv("EDGEWISE_DATA_DIR", f.data_dir.c_str(), 1);
  if (f.threads > 0) omp_set_num_threads(static_cast<int>(f.threads));
  const int threads = omp_get_max_threads();
  std::printf("threads: %d\n", threads);
  GraphTaskOptions o;
  o.dataset = f.dataset;
  o.folds = *parse_folds(f.folds);
  o.num_folds = f.num_folds;
  o.model.layers = f.has("--layers") ? f.layers : 3;
  o.model.hidden_features = f.has("--hidden") ? f.hidden : 64;
  o.model.dropout = f.dropout;
  o.model.pooling = parse_reduce_op(f.pooling);
  o.model.batch_norm = f.batch_norm;
  o.train.epochs = f.has("--epochs") ? f.epochs : 50;
  o.train.batch_size = f.batch_size;
  o.train.lr = f.lr;
  o.train.weight_decay = f.has("--weight-decay") ? f.weight_decay : 0.0f;
  o.train.seed = f.seed;
  o.train.log_every = f.log_every;
  o.device = Device::parse(f.device);
  o.save_folds = f.save_folds;
  const GraphTaskResult r = run_graph_task(o);
  if (!f.json.empty()) {
    nlohmann::ordered_json folds = nlohmann::ordered_json::array();
    std::vector<double> test_acc;
    for (const FoldResult& fold : r.folds) {
      test_acc.push_back(fold.test_acc);
      folds.push_back({{"fold", fold.fold},
                       {"test_acc", fold.test_acc},
                       {"valid_acc", fold.best_valid_acc},
                       {"train_acc", fold.train_acc},
                       {"best_epoch", fold.best_epoch},
                       {"epoch_ms_median", fold.epoch_ms_median},
                       {"graphs_per_second", fold.graphs_per_second},
                       {"seconds", fold.seconds}});
    }
    nlohmann::ordered_json out = {{"task", "graph"},
                                  {"dataset", r.dataset},
                                  {"model", "gin"},
                                  {"device", o.device.str()},
                                  {"threads", threads},
                                  {"num_graphs", r.num_graphs},
                                  {"num_folds", o.num_folds},
                                  {"folds_source", r.folds_source},
                                  {"test_acc_mean", r.test_acc_mean},
                                  {"test_acc_std", r.test_acc_std},
                                  {"valid_acc_mean", r.valid_acc_mean},
                                  {"epoch_ms_median", r.epoch_ms_median},
                                  {"seconds", r.seconds},
                                  {"test_acc", test_acc},
                                  {"folds", folds}};
    cli::write_json_file(f.json, out);
    std::printf("final metrics: %s\n", f.json.c_str());
  }
  return 0;
}

// Flags of one task given with the other: a usage error naming the flag.
std::optional<std::string> check_task_flags(const Flags& f) {
  static const char* const kGraphOnly[] = {"--folds", "--num-folds", "--batch-size", "--pooling", "--save-folds",
                                           "--batch-norm", "--threads"};
  static const char* const kNodeOnly[] = {"--runs", "--checkpoint", "--checkpoint-every", "--resume", "--metrics",
                                          "--plot", "--select", "--patience", "--features", "--form",
                                          "--aggregation", "--sage-aggr", "--heads", "--output-heads",
                                          "--attention-dropout", "--synthetic-nodes", "--optimizer",
                                          "--normalize-features", "--reorder", "--undirected", "--self-loops"};
  if (f.task == "graph") {
    for (const char* flag : kNodeOnly)
      if (f.has(flag)) return std::string(flag) + " does not apply to --task graph";
    const std::vector<int64_t> folds = parse_folds(f.folds).value_or(std::vector<int64_t>{});
    for (int64_t fold : folds)
      if (fold >= f.num_folds)
        return "--folds: fold " + std::to_string(fold) + " is outside [0, " + std::to_string(f.num_folds) +
               ") (--num-folds " + std::to_string(f.num_folds) + ")";
    if (f.has("--model") && f.model != "gin") return "--model " + f.model + ": --task graph trains gin only";
  } else {
    for (const char* flag : kGraphOnly)
      if (f.has(flag)) return std::string(flag) + " needs --task graph";
    // Model flags apply to their model only (a flag that would be ignored is an error).
    for (const char* flag : {"--heads", "--output-heads", "--attention-dropout"})
      if (f.has(flag) && f.model != "gat") return std::string(flag) + " applies to --model gat only (got " + f.model + ")";
    if (f.has("--sage-aggr") && f.model != "sage" && f.model != "graphsage")
      return "--sage-aggr applies to --model sage only (got " + f.model + ")";
  }
  const bool generated = f.dataset == "synthetic" || f.dataset.rfind("rmat:", 0) == 0;
  if (f.edges.given() && generated)
    return std::string(f.has("--undirected") ? "--undirected" : "--self-loops") +
           " applies to datasets read from files (--dataset " + f.dataset + " is generated)";
  if (f.has("--synthetic-nodes") && f.dataset != "synthetic" && f.dataset != "auto")
    return "--synthetic-nodes applies to --dataset synthetic (or auto) only (got " + f.dataset + ")";
  return std::nullopt;
}

// One line per flag: a new flag is a field above and a line here.
void add_flags(CLI::App& app, Flags& f) {
  using namespace edgewise::cli;
  constexpr RealRange kPositive{.min = 0, .min_inclusive = false};
  constexpr RealRange kNonNegative{.min = 0};
  add_choice(app, "--task", f.task,
             "node (node classification), link (link prediction: GCN encoder, dot-product decoder, PyG "
             "link_pred.py's recipe 128->64, 100 epochs, no dropout or weight decay where the flags are not given; "
             "reports test AUC and Hits@K) or graph (graph classification: GIN, k-fold; defaults then: --dataset "
             "reddit_threads when found else synthetic graphs, --layers 3, --hidden 64, --epochs 50, "
             "--weight-decay 0)",
             {"node", "link", "graph"});
  add_int(app, "--hits-k", f.hits_k, "--task link: K of Hits@K (OGB: positives above the K-th best negative)", 1);
  add_text(app, "--dataset", f.dataset,
           "dataset name in the data dir (cora, citeseer, amazon_photo, coauthor_cs), a path to an .npz (OGB, "
           "gnn-benchmark or scipy.sparse), an OGB raw dataset folder or an edge-list file, 'synthetic' "
           "(planted partition), 'rmat:N:E:F[:K]' (R-MAT, F features, K classes), or 'auto' (cora when found, else "
           "synthetic)")
      ->check(CLI::Validator(
          [](std::string& value) {
            try {
              (void)parse_rmat_spec(value);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          },
          "DATASET"));
  f.edges.add_to(app);
  add_text(app, "--data-dir", f.data_dir,
           "where dataset names are looked up (default: $EDGEWISE_DATA_DIR, else ~/.cache/edgewise/datasets)");
  add_choice(app, "--model", f.model,
             "model; gat defaults to Velickovic et al.'s recipe (8 heads x 8 hidden, ELU, dropout 0.6 on inputs "
             "and attention, lr 0.005, weight decay 5e-4, 1 output head, up to 1000 epochs with patience 100) "
             "wherever the flags are not given",
             {"gcn", "sage", "graphsage", "gin", "gat"});
  add_int(app, "--heads", f.heads, "GAT: attention heads of the hidden layers", 1, kMaxHeads);
  add_int(app, "--output-heads", f.output_heads, "GAT: attention heads of the output layer (averaged)", 1,
          kMaxHeads);
  add_real(app, "--attention-dropout", f.attention_dropout, "GAT: dropout on the attention coefficients",
           {.min = 0, .max = 1, .max_inclusive = false});
  add_int(app, "--layers", f.layers, "number of graph convolutions", 1, kMaxLayers);
  add_int(app, "--hidden", f.hidden, "hidden features", 1, kMaxHidden);
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
                  "write final metrics (test_acc_mean, test_acc_std, valid_acc_mean, epoch_ms_median, runs, ...; "
                  "--task link: test_auc_mean, test_auc_std, test_hits_at_k, ...)");
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
  add_bool(app, "--distributed", f.distributed,
           "1: full-batch training over MPI ranks (mpirun -np K edgewise-train --distributed 1 ...), one graph part "
           "per rank; equals the single-process run (gcn, sage, gin)");
  add_text(app, "--parts-dir", f.parts_dir,
           "--distributed: each rank loads DIR/part<rank>.npz (written by edgewise-partition) instead of "
           "partitioning --dataset in memory");
  add_uint64(app, "--partition-seed", f.partition_seed, "--distributed without --parts-dir: METIS seed");
  add_graph_task_flags(app, f);
}

// Checks between flags, before any data is loaded; returns the message of the first violation.
std::optional<std::string> check_flag_combinations(const Flags& f) {
  if (f.task == "link") {
    if (f.model != "gcn") return "--task link supports --model gcn only (got " + f.model + ")";
    for (const char* flag : {"--metrics", "--plot", "--checkpoint", "--checkpoint-every", "--resume", "--patience",
                             "--select", "--optimizer", "--aggregation", "--form", "--sage-aggr", "--heads",
                             "--output-heads", "--attention-dropout", "--nonfinite", "--reorder"})
      if (f.has(flag)) return std::string(flag) + " is not supported with --task link";
  } else if (f.has("--hits-k")) {
    return "--hits-k needs --task link";
  }
  if (std::optional<std::string> error = check_task_flags(f)) return error;
  if ((!f.checkpoint.empty() || !f.resume.empty()) && f.runs != 1)
    return "--checkpoint / --resume hold one run: use --runs 1 (got " + std::to_string(f.runs) + ")";
  if (f.checkpoint_every > 0 && f.checkpoint.empty()) return "--checkpoint-every needs --checkpoint FILE";
  if (f.distributed) {
#if !EDGEWISE_TRAIN_DISTRIBUTED
    return "--distributed: this edgewise-train was built without MPI (install libopenmpi-dev and libmetis-dev)";
#endif
    if (f.task != "node") return "--distributed supports --task node only (got " + f.task + ")";
    if (f.model == "gat") return "--distributed supports --model gcn, sage or gin (got gat)";
    if (f.runs != 1) return "--distributed runs once: use --runs 1 (got " + std::to_string(f.runs) + ")";
    if (!f.checkpoint.empty() || !f.resume.empty()) return "--distributed does not write or resume checkpoints";
    if (f.has("--reorder")) return "--distributed does not reorder nodes (METIS places them): drop --reorder";
    if (!f.parts_dir.empty() && (f.edges.given() || f.has("--dataset")))
      return std::string(f.has("--dataset") ? "--dataset" : f.has("--undirected") ? "--undirected" : "--self-loops") +
             " does not apply to --parts-dir (the parts were built by edgewise-partition from its --dataset)";
    if (f.device != "cpu" && f.device != "cuda" && f.device != "gpu")
      return "--distributed takes --device cpu or cuda (each rank takes the GPU of its local rank), got " + f.device;
  } else if (!f.parts_dir.empty()) {
    return "--parts-dir needs --distributed 1";
  }
  return std::nullopt;
}

Dataset load(const Flags& f, std::string& source, std::string* identity = nullptr) {
  if (!f.data_dir.empty()) setenv("EDGEWISE_DATA_DIR", f.data_dir.c_str(), 1);
  LoadOptions options;
  f.edges.apply(options);
  ResolvedDataset r = load_dataset_spec(f.dataset, f.synthetic_nodes, options);
  if (identity) *identity = r.identity;
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

// The --json record of a node-classification run: the same keys for a single
// process and a distributed run (which adds its own: ranks, halo bytes).
nlohmann::ordered_json node_task_json(const std::string& dataset, const std::string& model, const std::string& device,
                                      int64_t runs, const std::vector<double>& test, const std::vector<double>& valid,
                                      const std::vector<double>& train, double epoch_ms_median,
                                      const std::vector<double>& seconds, const Flags& f) {
  return {{"task", "node"},
          {"dataset", dataset},
          {"model", model},
          {"device", device},
          {"runs", runs},
          {"test_acc_mean", mean(test)},
          {"test_acc_std", stddev(test)},
          {"valid_acc_mean", mean(valid)},
          {"train_acc_mean", mean(train)},
          {"epoch_ms_median", epoch_ms_median},
          {"seconds_per_run", mean(seconds)},
          {"form", f.form},
          {"reorder", f.reorder},
          {"test_acc", test}};
}

// --task link: the link recipe's defaults, overridden by the flags given.
int train_link(const Flags& f) {
  examples::LinkTaskSettings s;
  if (f.has("--layers")) s.layers = f.layers;
  if (f.has("--hidden")) s.hidden = f.hidden;
  if (f.has("--dropout")) s.dropout = f.dropout;
  if (f.has("--lr")) s.lr = f.lr;
  if (f.has("--weight-decay")) s.weight_decay = f.weight_decay;
  if (f.has("--epochs")) s.epochs = f.epochs;
  s.hits_k = f.hits_k;
  s.seed = f.seed;
  s.runs = f.runs;
  s.log_every = f.log_every;
  s.device = f.device;
  s.prepare.features = parse_feature_format(f.features);
  s.prepare.normalize_features = f.normalize_features;
  s.json = f.json;
  set_deterministic(f.deterministic);
  std::string source;
  const Dataset dataset = load(f, source);
  return examples::run_link_task(dataset, source, s);
}

#if EDGEWISE_TRAIN_DISTRIBUTED
int train_distributed(const Flags& f);
#endif

// What a checkpoint must have been written with to be resumed by this run: the
// data and every setting that changes the numbers (not --epochs, which a resume
// extends, nor logging or output files). Effective values, defaults included.
RunTags run_tags(const Flags& f, const std::string& identity, const ModelConfig& config,
                 const TrainerOptions& options) {
  const auto text = [](auto value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  RunTags tags = {{"--dataset", identity},
                  {"--model", to_string(config.kind)},
                  {"--layers", text(config.layers)},
                  {"--hidden", text(config.hidden_features)},
                  {"--dropout", text(config.dropout)},
                  {"--lr", text(options.lr)},
                  {"--weight-decay", text(options.weight_decay)},
                  {"--optimizer", f.optimizer},
                  {"--select", f.select},
                  {"--patience", text(options.patience)},
                  {"--seed", text(options.seed)},
                  {"--features", f.features},
                  {"--normalize-features", text(f.normalize_features)},
                  {"--aggregation", f.aggregation},
                  {"--form", f.form},
                  {"--deterministic", text(f.deterministic)},
                  {"--reorder", f.reorder},
                  {"--undirected", f.edges.undirected_text()},
                  {"--self-loops", f.edges.self_loops_text()}};
  if (config.kind == ModelKind::GraphSAGE) tags.emplace_back("--sage-aggr", f.sage_aggr);
  if (config.kind == ModelKind::Gat) {
    tags.emplace_back("--heads", text(config.gat_heads));
    tags.emplace_back("--output-heads", text(config.gat_output_heads));
    tags.emplace_back("--attention-dropout", text(config.attention_dropout));
  }
  return tags;
}

int train(const Flags& f) {
  if (f.task == "link") return train_link(f);
#if EDGEWISE_TRAIN_DISTRIBUTED
  if (f.distributed) return train_distributed(f);
#endif
  const Device device = Device::parse(f.device);
  std::string source, identity;
  Dataset dataset = load(f, source, &identity);
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
    options.run_tags = run_tags(f, identity, config, options);
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
    nlohmann::ordered_json out = node_task_json(dataset.name, to_string(config.kind), device.str(), f.runs, test,
                                                valid, train, ms_median, seconds, f);
    out["peak_training_memory_mb"] = peak_mb;
    cli::write_json_file(f.json, out);
    std::printf("final metrics: %s\n", f.json.c_str());
  }
  return 0;
}

#if EDGEWISE_TRAIN_DISTRIBUTED
// --distributed: one part per MPI rank, fit_distributed (edgewise/gnn/dist/trainer.hpp).
// Rank 0 prints and writes the output files.
int train_distributed(const Flags& f) {
  dist::Environment mpi(nullptr, nullptr);
  const dist::Communicator comm = dist::Communicator::world();
  const bool root = comm.rank() == 0;
  PrepareOptions prep;
  prep.features = parse_feature_format(f.features);
  prep.normalize_features = f.normalize_features;
  dist::Part part;
  std::string source, dataset_name;
  if (!f.parts_dir.empty()) {
    const std::string path = f.parts_dir + "/part" + std::to_string(comm.rank()) + ".npz";
    part = dist::read_part(path);
    if (part.num_parts != comm.size() || part.rank != comm.rank())
      throw std::invalid_argument("--parts-dir: " + path + " is part " + std::to_string(part.rank) + " of " +
                                  std::to_string(part.num_parts) + ", but this is rank " + std::to_string(comm.rank()) +
                                  " of " + std::to_string(comm.size()));
    source = f.parts_dir;
    dataset_name = part.local.name;
  } else {
    // Every rank loads the dataset and partitions it the same way (METIS is deterministic for a seed).
    Dataset dataset = load(f, source);
    dataset_name = dataset.name;
    if (prep.features == FeatureFormat::Auto)  // decided on the whole graph, as the single process does
      prep.features = dataset.features.density() <= prep.sparse_threshold ? FeatureFormat::Sparse : FeatureFormat::Dense;
    dist::PartitionOptions po;
    po.seed = f.partition_seed;
    const dist::Partition p = dist::partition(dataset, comm.size(), po);
    if (root)
      std::printf("edgewise-train: %s — %lld nodes, %lld edges over %d ranks: edge cut %lld (%.2f %%), node balance "
                  "%.3f\n",
                  source.c_str(), static_cast<long long>(dataset.num_nodes), static_cast<long long>(dataset.num_edges()),
                  comm.size(), static_cast<long long>(p.edge_cut),
                  100.0 * static_cast<double>(p.edge_cut) / static_cast<double>(std::max<int64_t>(dataset.num_edges(), 1)),
                  p.node_balance());
    part = dist::build_part(dataset, p, comm.rank());
  }
  // GPUs: local rank i of a host takes its GPU i (modulo the GPUs there).
  const Device device = f.device == "cpu" ? Device::cpu()
                                          : Device::cuda(comm.local_rank() % std::max(1, cuda_device_count()));
  dist::DistTrainData data = dist::prepare_part(comm, std::move(part), prep, device);
  const dist::HaloExchange halo(comm, data.part, device);
  if (root) std::printf("device %s, halo exchange over %s\n", device.str().c_str(), comm.transport(device));
  ModelConfig config;
  config.kind = parse_model_kind(f.model);
  config.in_features = data.local.features.cols();
  config.hidden_features = f.hidden;
  config.out_features = data.local.num_classes;
  config.layers = f.layers;
  config.dropout = f.dropout;
  config.sage_aggregator = parse_sage_aggregator(f.sage_aggr);
  config.aggregation.strategy = parse_strategy(f.aggregation);
  config.aggregation.form = f.form == "materialized" ? MessageForm::Materialized : MessageForm::Fused;
  set_deterministic(f.deterministic);
  Generator generator(f.seed);
  auto model = dist::make_dist_model(config, generator, data, halo);
  if (root)
    std::printf("model: %s, %lld parameters; part 0: %lld owned + %lld halo nodes\n", model->describe().c_str(),
                static_cast<long long>(model->num_parameters()), static_cast<long long>(data.part.num_owned),
                static_cast<long long>(data.part.num_halo()));
  TrainerOptions options;
  options.epochs = f.epochs;
  options.lr = f.lr;
  options.weight_decay = f.weight_decay;
  options.optimizer = parse_optimizer(f.optimizer);
  options.patience = f.patience;
  options.selection = parse_model_selection(f.select);
  options.seed = f.seed;
  options.log_every = f.log_every;
  options.nonfinite_loss = parse_nonfinite_loss(f.nonfinite);
  if (!f.metrics.empty()) (ends_with(f.metrics, ".json") ? options.metrics_json : options.metrics_csv) = f.metrics;
  options.plot_svg = f.plot;
  const dist::DistTrainResult run = dist::fit_distributed(comm, *model, data, options);
  const TrainResult& r = run.result;
  if (root) {
    std::printf("\n%s over %d ranks: test accuracy %.2f %% (valid %.2f %%, best epoch %lld), %.3f ms/epoch (median), "
                "halo exchange %.3f MB/epoch, %.2f s\n",
                to_string(config.kind), comm.size(), 100 * r.test_acc, 100 * r.best_valid_acc,
                static_cast<long long>(r.best_epoch), r.epoch_ms_median, run.halo_bytes_per_epoch / 1e6,
                r.total_seconds);
    if (!f.json.empty()) {
      // The single-process schema (one run: std 0), plus what only a distributed run has.
      nlohmann::ordered_json out = node_task_json(dataset_name, to_string(config.kind), device.str(), 1,
                                                  {r.test_acc}, {r.best_valid_acc}, {r.train_acc}, r.epoch_ms_median,
                                                  {r.total_seconds}, f);
      out["best_epoch"] = r.best_epoch;
      out["ranks"] = comm.size();
      out["halo_bytes_per_epoch"] = run.halo_bytes_per_epoch;
      cli::write_json_file(f.json, out);
      std::printf("final metrics: %s\n", f.json.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
#endif  // EDGEWISE_TRAIN_DISTRIBUTED

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Full-batch node classification (GCN, GraphSAGE, GIN or GAT), link prediction (--task link) or graph "
               "classification (--task graph) "
               "with progress, metrics and a plot.",
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
    if (flags.task == "graph") return train_graph_task(flags);
    return train(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-train: %s\n", e.what());
    return 1;
  }
}
