// Graph classification with the GIN classifier (nn/gin_graph_classifier.hpp), as
// PyG's GIN example trains it: cross-entropy and Adam over shuffled minibatches of graphs; k-fold cross-validation with
// test = fold k, valid = fold k + 1 (mod k), train = the rest, and model selection
// by validation accuracy (the test accuracy of the epoch with the best validation
// accuracy, the earliest on ties).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/data/graph_dataset.hpp"
#include "edgewise/gnn/graph/graph_batch.hpp"
#include "edgewise/gnn/nn/gin_graph_classifier.hpp"
#include "edgewise/gnn/train/train_options.hpp"

namespace edgewise::gnn {

// TrainOptions with the GIN example's defaults (50 epochs, no weight decay; the seed
// also shuffles the minibatches) and the batch sizes. Selection is by validation
// accuracy, the earliest epoch on ties.
struct GraphTrainOptions : TrainOptions {
  GraphTrainOptions() {
    epochs = 50;
    weight_decay = 0.0f;
  }
  int64_t batch_size = 128;
  int64_t eval_batch_size = 1024;
};

struct FoldSplit {
  std::vector<int64_t> train, valid, test;  // graph ids, ascending
};
// test = fold `fold`, valid = fold (fold + 1) % num_folds, train = the rest. Throws
// std::invalid_argument when fold is outside [0, num_folds) or a part is empty.
FoldSplit fold_split(const std::vector<int64_t>& folds, int64_t num_folds, int64_t fold);

// The fold's run: TrainResult's history ("train_acc" — the running accuracy over
// the epoch's training batches —, "valid_acc", "test_acc"), selected epoch and
// timing, and the fold's own figures.
struct FoldResult : TrainResult {
  int64_t fold = 0;
  double graphs_per_second = 0;
  double seconds = 0;  // the whole fold, evaluation included
};

// Trains a fresh GinGraphClassifier (seeded by options.seed) on split.train on the
// one epoch loop (checkpoints, resume, patience, schedule, metric files as every
// task) and reports as documented above. `fold` labels the progress lines.
FoldResult train_graph_fold(const GraphDataset& data, const FoldSplit& split, const GinGraphConfig& config,
                            const GraphTrainOptions& options, Device device = Device::cpu(), int64_t fold = 0);

// Accuracy of `model` (eval mode) on `graph_ids`, in batches of batch_size.
double evaluate_graphs(GinGraphClassifier& model, const GraphDataset& data, const std::vector<int64_t>& graph_ids,
                       int64_t batch_size, Device device = Device::cpu());

}  // namespace edgewise::gnn

namespace edgewise::gnn {

// The whole cross-validated experiment behind `edgewise-train --task graph`.
struct GraphTaskOptions {
  // "auto" (reddit_threads from the data dir when found, else synthetic), or any
  // spec load_graph_dataset takes.
  std::string dataset = "auto";
  std::vector<int64_t> folds{0, 1, 2};  // the folds to run as test fold; empty: all
  int64_t num_folds = 10;
  GinGraphConfig model;  // in_features and num_classes come from the data
  // Training; with several folds, each fold's checkpoint, resume, metric and plot
  // files get ".fold<k>" before their extension (run.npz -> run.fold0.npz).
  GraphTrainOptions train;
  Device device = Device::cpu();
  std::string save_folds;  // when set, the fold of every graph is written there, one per line
};

struct GraphTaskResult {
  std::string dataset, source;  // the dataset's name; what was loaded and how
  int64_t num_graphs = 0, num_features = 0, num_classes = 0;
  std::string folds_source;     // "stored" (the file's fold key) or "stratified, seed S"
  std::string model;            // describe()
  int64_t num_parameters = 0;
  std::vector<FoldResult> folds;
  double test_acc_mean = 0, test_acc_std = 0, valid_acc_mean = 0;
  double epoch_ms_median = 0, seconds = 0;
};

// Loads the data, assigns folds (the stored ones when the file has num_folds of
// them, else stratified_folds with the training seed), trains one model per
// requested fold and prints progress. Throws std::invalid_argument (or
// DataFileError) naming the bad option or file.
GraphTaskResult run_graph_task(const GraphTaskOptions& options);

}  // namespace edgewise::gnn
