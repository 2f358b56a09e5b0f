// edgewise-train's flags: definitions, the checks between them, and turning them into
// each task's TrainOptions, run record and output files.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "app.hpp"
#include "edgewise/gnn/data/dataset_spec.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

namespace {

// Upper bounds of the size flags, checked while parsing (before any data is
// loaded): beyond them a run only exhausts memory. 1024 threads is far beyond any
// one machine's cores (each OpenMP thread reserves a stack and partial outputs).
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxHeads = 256;
constexpr int64_t kMaxHidden = int64_t{1} << 16;
constexpr int64_t kMaxLayers = 64;

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "m.csv" + ".fold3" -> "m.fold3.csv".
std::string with_suffix(const std::string& path, const std::string& suffix) {
  if (suffix.empty()) return path;
  const std::filesystem::path p(path);
  std::filesystem::path out = p.parent_path() / (p.stem().string() + suffix);
  out += p.extension();
  return out.string();
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


}  // namespace

std::optional<std::vector<int64_t>> parse_hops(const std::string& text) {
  std::vector<int64_t> hops;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const std::optional<int64_t> v = cli::parse_int(item);
    if (!v || *v < -1) return std::nullopt;
    hops.push_back(*v);
  }
  if (hops.empty() || text.back() == ',' || hops.size() > 64) return std::nullopt;
  return hops;
}

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

// One line per flag: a new flag is a field of Flags and a line here.
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
              (void)parse_dataset_spec(value);
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
  add_choice(app, "--optimizer", f.optimizer, "optimizer (every task)", {"adam", "adamw", "sgd"});
  add_choice(app, "--lr-schedule", f.lr_schedule,
             "learning rate over the epochs (every task): constant, or cosine (from --lr down to 0 after the last "
             "epoch, torch's CosineAnnealingLR)",
             {"constant", "cosine"});
  add_int(app, "--epochs", f.epochs, "training epochs", 1);
  add_int(app, "--eval-every", f.eval_every, "evaluate every N epochs (and after the last)", 1);
  add_int(app, "--patience", f.patience,
          "early stopping: evaluations without a better validation metric (accuracy; --task link: AUC) (0: off)", 0);
  add_choice(app, "--select", f.select,
             "reported model: best-valid (best validation metric) or last (final epoch)", {"best-valid", "last"});
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
                                              "else CSV; --task graph: of every fold, FILE.fold<k>.ext)");
  add_output_path(app, "--plot", f.plot, "write the training curves of the first run as SVG (--task graph: per fold)");
  add_output_path(app, "--checkpoint", f.checkpoint,
                  "write a checkpoint (.npz: parameters, optimizer, RNG, history) after the last epoch and every "
                  "--checkpoint-every epochs; written atomically");
  add_int(app, "--checkpoint-every", f.checkpoint_every, "checkpoint every N epochs (0: only after the last)", 0);
  add_text(app, "--resume", f.resume,
           "continue the run saved in this checkpoint up to --epochs in total (same flags otherwise); the result "
           "equals the uninterrupted run's bit for bit")
      ->check(CLI::ExistingFile);
  add_int(app, "--synthetic-nodes", f.synthetic_nodes, "synthetic graph: nodes", 1);
  add_text(app, "--sampled", f.sampled,
           "--task node: train GraphSAGE on sampled neighbourhoods instead of full-batch: neighbours per hop from "
           "the seeds, comma-separated (e.g. 15,10,5; -1: all), one layer per hop, PyG NeighborLoader's "
           "semantics; native threads sample and gather ahead of training; seeds per batch: --batch-size "
           "(default 512 here); evaluation stays full-batch")
      ->check(CLI::Validator(
          [](std::string& value) {
            return parse_hops(value) ? std::string() : "expected neighbours per hop like 15,10,5 (each >= 0 or -1)";
          },
          "HOPS"));
  add_int(app, "--sampler-threads", f.sampler_threads, "--sampled: threads that sample ahead of training", 1,
          kMaxThreads);
  add_bool(app, "--distributed", f.distributed,
           "1: full-batch training over MPI ranks (mpirun -np K edgewise-train --distributed 1 ...), one graph part "
           "per rank; equals the single-process run (gcn, sage, gin)");
  add_text(app, "--parts-dir", f.parts_dir,
           "--distributed: each rank loads DIR/part<rank>.npz (written by edgewise-partition) instead of "
           "partitioning --dataset in memory");
  add_uint64(app, "--partition-seed", f.partition_seed, "--distributed without --parts-dir: METIS seed");
  add_graph_task_flags(app, f);
}



std::optional<std::string> check_flag_combinations(const Flags& f) {
  // Flags of one task given with another: a usage error naming the flag.
  static const char* const kGraphOnly[] = {"--folds", "--num-folds", "--batch-size", "--pooling", "--save-folds",
                                           "--batch-norm", "--threads"};
  static const char* const kNotForGraph[] = {"--runs", "--features", "--form", "--aggregation", "--sage-aggr",
                                             "--heads", "--output-heads", "--attention-dropout", "--synthetic-nodes",
                                             "--normalize-features", "--reorder", "--undirected", "--self-loops"};
  static const char* const kNotForLink[] = {"--aggregation", "--form", "--sage-aggr", "--heads", "--output-heads",
                                            "--attention-dropout", "--reorder"};
  if (f.task == "link") {
    if (f.model != "gcn") return "--task link supports --model gcn only (got " + f.model + ")";
    for (const char* flag : kNotForLink)
      if (f.has(flag)) return std::string(flag) + " is not supported with --task link";
  } else if (f.has("--hits-k")) {
    return "--hits-k needs --task link";
  }
  if (f.task == "graph") {
    for (const char* flag : kNotForGraph)
      if (f.has(flag)) return std::string(flag) + " does not apply to --task graph";
    const std::vector<int64_t> folds = parse_folds(f.folds).value_or(std::vector<int64_t>{});
    for (int64_t fold : folds)
      if (fold >= f.num_folds)
        return "--folds: fold " + std::to_string(fold) + " is outside [0, " + std::to_string(f.num_folds) +
               ") (--num-folds " + std::to_string(f.num_folds) + ")";
    if (f.has("--model") && f.model != "gin") return "--model " + f.model + ": --task graph trains gin only";
  } else {
    for (const char* flag : kGraphOnly)
      if (f.has(flag) && !(f.has("--sampled") && std::string(flag) == "--batch-size"))
        return std::string(flag) + " needs --task graph" + (std::string(flag) == "--batch-size" ? " or --sampled" : "");
    // Model flags apply to their model only (a flag that would be ignored is an error).
    for (const char* flag : {"--heads", "--output-heads", "--attention-dropout"})
      if (f.has(flag) && f.model != "gat") return std::string(flag) + " applies to --model gat only (got " + f.model + ")";
    if (f.has("--sage-aggr") && f.model != "sage" && f.model != "graphsage")
      return "--sage-aggr applies to --model sage only (got " + f.model + ")";
  }
  if (f.has("--sampled")) {
    if (f.task != "node") return "--sampled applies to --task node only (got " + f.task + ")";
    if (f.has("--model") && f.model != "sage" && f.model != "graphsage")
      return "--sampled trains GraphSAGE (--model sage), not --model " + f.model;
    if (f.distributed) return "--sampled does not combine with --distributed";
    const std::vector<int64_t> hops = parse_hops(f.sampled).value_or(std::vector<int64_t>{});
    if (f.has("--layers") && f.layers != static_cast<int64_t>(hops.size()))
      return "--layers " + std::to_string(f.layers) + " differs from the " + std::to_string(hops.size()) +
             " hops of --sampled (one layer per hop)";
    for (const char* flag : {"--form", "--aggregation", "--reorder", "--deterministic"})
      if (f.has(flag)) return std::string(flag) + " applies to full-batch training, not --sampled";
  } else if (f.has("--sampler-threads")) {
    return "--sampler-threads needs --sampled";
  }
  const bool generated = f.dataset == "synthetic" || f.dataset.starts_with("synthetic:") || f.dataset.starts_with("rmat:");
  if (f.edges.given() && generated)
    return std::string(f.has("--undirected") ? "--undirected" : "--self-loops") +
           " applies to datasets read from files (--dataset " + f.dataset + " is generated)";
  if (f.has("--synthetic-nodes") && f.dataset != "synthetic" && f.dataset != "auto")
    return "--synthetic-nodes applies to --dataset synthetic (or auto) only (got " + f.dataset + ")";
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

TrainOptions train_options(const Flags& f, TrainOptions o) {
  if (f.has("--epochs")) o.epochs = f.epochs;
  if (f.has("--lr")) o.lr = f.lr;
  if (f.has("--weight-decay")) o.weight_decay = f.weight_decay;
  if (f.has("--patience")) o.patience = f.patience;
  o.lr_schedule = parse_lr_schedule(f.lr_schedule);
  o.optimizer = parse_optimizer(f.optimizer);
  o.eval_every = f.eval_every;
  o.selection = parse_model_selection(f.select);
  o.seed = f.seed;
  o.log_every = f.log_every;
  o.nonfinite_loss = parse_nonfinite_loss(f.nonfinite);
  o.checkpoint_path = f.checkpoint;
  o.checkpoint_every = f.checkpoint_every;
  o.resume_path = f.resume;
  return o;
}

Dataset load(const Flags& f, std::string& source, std::string* identity) {
  if (!f.data_dir.empty()) setenv("EDGEWISE_DATA_DIR", f.data_dir.c_str(), 1);
  LoadOptions options;
  f.edges.apply(options);
  ResolvedDataset r = load_dataset_spec(f.dataset, f.synthetic_nodes, options);
  if (identity) *identity = r.identity;
  source = r.description;
  return std::move(r.dataset);
}

RunTags common_run_tags(const Flags& f, const std::string& identity, const TrainOptions& options) {
  const auto text = [](auto value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  RunTags tags = {{"--task", f.task},
          {"--dataset", identity},
          {"--lr", text(options.lr)},
          {"--lr-schedule", to_string(options.lr_schedule)},
          {"--weight-decay", text(options.weight_decay)},
          {"--optimizer", f.optimizer},
          {"--select", f.select},
          {"--patience", text(options.patience)},
          {"--eval-every", text(options.eval_every)},
          {"--seed", text(options.seed)}};
  // A schedule over the epochs fixes their number: a resumed run may not extend it.
  if (options.lr_schedule != LrSchedule::Constant) tags.emplace_back("--epochs", text(options.epochs));
  return tags;
}

void write_run_files(const Flags& f, const TrainResult& result, const std::string& title, const std::string& suffix) {
  if (!f.metrics.empty()) {
    const std::string path = with_suffix(f.metrics, suffix);
    if (ends_with(f.metrics, ".json")) {
      write_metrics_json(path, result);
    } else {
      write_metrics_csv(path, result.history);
    }
    std::printf("per-epoch metrics: %s\n", path.c_str());
  }
  if (!f.plot.empty()) {
    const std::string path = with_suffix(f.plot, suffix);
    write_training_curves_svg(path, result.history, title);
    std::printf("training curves: %s\n", path.c_str());
  }
}

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

}  // namespace edgewise::apps::train
