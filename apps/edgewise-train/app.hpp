// edgewise-train: the flags every task shares and the pieces the task drivers use.
// One file per task: node_task.cpp, link_task.cpp, graph_task.cpp, distributed.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "edgewise/cli/dataset_flags.hpp"
#include "edgewise/cli/flags.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/train/train_options.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::apps::train {

// Every flag's value, initialised to its default.
struct Flags {
  std::string task = "node";
  int64_t hits_k = 50;
  std::string dataset = "auto", data_dir, model = "gcn";
  int64_t layers = 2, hidden = 16;
  float dropout = 0.5f, lr = 0.01f, weight_decay = 5e-4f;
  std::string optimizer = "adam", lr_schedule = "constant";
  int64_t epochs = 200, patience = 0, eval_every = 1;
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
  bool distributed = false;  // MPI: one part per rank (distributed.cpp)
  std::string parts_dir;
  uint64_t partition_seed = 0;
  std::string json, metrics, plot;
  std::string checkpoint, resume;
  int64_t checkpoint_every = 0;
  int64_t synthetic_nodes = 2708;
  std::string sampled;  // --task node on sampled neighbourhoods: neighbours per hop from the seeds
  int64_t sampler_threads = 1;
  int64_t heads = 8, output_heads = 1;
  float attention_dropout = 0.6f;
  // --task graph (graph classification)
  std::string folds = "0,1,2", pooling = "sum", save_folds;
  int64_t num_folds = 10, batch_size = 128, threads = 1;
  bool batch_norm = false;
  cli::EdgeConventionFlags edges;  // --undirected, --self-loops
  std::set<std::string> given;     // flags set on the command line (the others keep the task's defaults)
  bool has(const std::string& flag) const { return given.count(flag) > 0; }
};

void add_flags(CLI::App& app, Flags& f);
// Checks between flags, before any data is loaded; the message of the first violation.
std::optional<std::string> check_flag_combinations(const Flags& f);
// "0,1,2" -> {0, 1, 2}; "all" -> {} (every fold); std::nullopt when malformed.
std::optional<std::vector<int64_t>> parse_folds(const std::string& text);

// The task's defaults with every training flag given on the command line applied
// (epochs, lr, --lr-schedule, weight decay, optimizer, patience, --eval-every,
// selection, seed, logging, non-finite policy, checkpoint and resume). Metric files
// are written by the program after its summary (write_run_files), never by training.
gnn::TrainOptions train_options(const Flags& f, gnn::TrainOptions defaults);

// Loads --dataset with the edge flags; `source` describes it, `identity` names what
// the data is (for a checkpoint's record of the run).
gnn::Dataset load(const Flags& f, std::string& source, std::string* identity = nullptr);

// The settings every task records in its checkpoints ("--dataset", the training
// flags that change the numbers), before the task's own.
gnn::RunTags common_run_tags(const Flags& f, const std::string& identity, const gnn::TrainOptions& options);

// --metrics and --plot for one run's result, `suffix` before the extension (".fold3").
void write_run_files(const Flags& f, const gnn::TrainResult& result, const std::string& title,
                     const std::string& suffix = "");

// Statistics over runs (there is always at least one).
double mean(const std::vector<double>& v);
double stddev(const std::vector<double>& v);  // sample standard deviation, 0 for one value
double median(std::vector<double> v);

// The --json record of a node-classification run: the same keys for a single
// process and a distributed run (which adds its own: ranks, halo bytes).
nlohmann::ordered_json node_task_json(const std::string& dataset, const std::string& model, const std::string& device,
                                      int64_t runs, const std::vector<double>& test, const std::vector<double>& valid,
                                      const std::vector<double>& train, double epoch_ms_median,
                                      const std::vector<double>& seconds, const Flags& f);

// "15,10,5" -> {15, 10, 5} (each >= 0, or -1 for all); std::nullopt when malformed.
std::optional<std::vector<int64_t>> parse_hops(const std::string& text);

// The results of --runs node-classification runs, added run by run; finish() prints
// the summary and the peak memory, then writes the first run's files and the --json
// record (with `extra` keys) — files after the summary, so a failed write loses nothing.
class NodeRuns {
 public:
  NodeRuns(const Flags& f, Device device);  // starts the peak-memory count
  void add(gnn::TrainResult result);
  int finish(const std::string& model, const std::string& dataset, const std::string& label,
             nlohmann::ordered_json extra = nlohmann::ordered_json::object());

 private:
  const Flags& f_;
  Device device_;
  std::size_t baseline_bytes_;
  std::vector<double> test_, valid_, train_, epoch_ms_, seconds_;
  gnn::TrainResult first_run_;
};

// The tasks; each returns the exit status.
int run_node_task(const Flags& f);
// --sampled: GraphSAGE on BatchPipeline minibatches, --runs seeded runs of the loaded data.
int run_sampled_node_runs(const Flags& f, const gnn::Dataset& dataset, const gnn::TrainData& data,
                          const std::string& identity, Device device);
int run_link_task(const Flags& f);
int run_graph_task(const Flags& f);
int run_distributed(const Flags& f);  // needs EDGEWISE_TRAIN_DISTRIBUTED

}  // namespace edgewise::apps::train
