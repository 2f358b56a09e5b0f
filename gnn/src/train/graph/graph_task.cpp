// The cross-validated graph-classification experiment: load, assign folds, train per fold, summarise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <system_error>

#include "edgewise/gnn/data/dataset.hpp"
#include "edgewise/gnn/train/graph_classification.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn {

namespace {

// "run.npz" -> "run.fold3.npz" (a file without an extension gets ".fold3").
std::string with_fold(const std::string& path, int64_t fold) {
  if (path.empty()) return path;
  const std::filesystem::path p(path);
  std::filesystem::path out = p.parent_path() / (p.stem().string() + ".fold" + std::to_string(fold));
  out += p.extension();
  return out.string();
}

// One fold's training options: its own checkpoint, resume and metric files when
// several folds run.
GraphTrainOptions fold_options(GraphTrainOptions o, int64_t fold, bool several) {
  if (!several) return o;
  for (std::string* path : {&o.checkpoint_path, &o.resume_path, &o.metrics_csv, &o.metrics_json, &o.plot_svg})
    *path = with_fold(*path, fold);
  return o;
}

GraphDataset load(const GraphTaskOptions& options, std::string& source) {
  if (options.dataset != "auto") {
    source = options.dataset;
    return load_graph_dataset(options.dataset, options.train.seed);
  }
  std::error_code ec;
  const std::filesystem::path reddit = default_data_dir() / "reddit_threads.npz";
  if (!default_data_dir().empty() && std::filesystem::is_regular_file(reddit, ec)) {
    source = reddit.string();
    return load_graph_dataset(reddit.string(), options.train.seed);
  }
  source = "no reddit_threads.npz in '" + default_data_dir().string() + "': synthetic graphs";
  return load_graph_dataset("synthetic", options.train.seed);
}

void write_folds(const std::string& path, const std::vector<int64_t>& folds) {
  std::ofstream out(path);
  for (int64_t f : folds) out << f << '\n';
  out.close();
  if (!out) throw std::runtime_error("--save-folds: cannot write '" + path + "'");
}

}  // namespace

GraphTaskResult run_graph_task(const GraphTaskOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  EW_REQUIRE(options.num_folds >= 3, "num_folds (", options.num_folds, ") must be >= 3");
  for (int64_t f : options.folds)
    EW_REQUIRE(f >= 0 && f < options.num_folds, "folds: fold ", f, " is outside [0, ", options.num_folds, ")");
  GraphTaskResult r;
  GraphDataset data = load(options, r.source);
  r.dataset = data.name;
  r.num_graphs = data.num_graphs();
  r.num_features = data.num_features;
  r.num_classes = data.num_classes;

  std::vector<int64_t> folds;
  const bool stored_fits =
      !data.folds.empty() && *std::max_element(data.folds.begin(), data.folds.end()) + 1 == options.num_folds;
  if (stored_fits) {
    folds = data.folds;
    r.folds_source = "stored";
  } else {
    folds = stratified_folds(data.labels, options.num_folds, options.train.seed);
    r.folds_source = "stratified, seed " + std::to_string(options.train.seed);
  }
  if (!options.save_folds.empty()) write_folds(options.save_folds, folds);

  GinGraphConfig config = options.model;
  config.in_features = data.num_features;
  config.num_classes = data.num_classes;
  {
    Generator g(options.train.seed);
    GinGraphClassifier probe(config, g, options.device);
    r.model = probe.describe();
    r.num_parameters = probe.num_parameters();
  }
  std::printf("edgewise-train --task graph: %s — %lld graphs, %lld nodes, %lld edges, %lld features, %lld classes; "
              "%lld folds (%s); device %s\n",
              r.source.c_str(), static_cast<long long>(r.num_graphs), static_cast<long long>(data.total_nodes()),
              static_cast<long long>(data.total_edges()), static_cast<long long>(r.num_features),
              static_cast<long long>(r.num_classes), static_cast<long long>(options.num_folds),
              r.folds_source.c_str(), options.device.str().c_str());
  if (!data.note.empty()) std::printf("note: %s\n", data.note.c_str());
  std::printf("model: %s, %lld parameters\n", r.model.c_str(), static_cast<long long>(r.num_parameters));
  std::fflush(stdout);

  std::vector<int64_t> run = options.folds;
  if (run.empty()) {
    run.resize(static_cast<size_t>(options.num_folds));
    std::iota(run.begin(), run.end(), int64_t{0});
  }
  std::vector<double> test, valid, epoch_ms;
  for (int64_t fold : run) {
    const FoldSplit split = fold_split(folds, options.num_folds, fold);
    FoldResult f = train_graph_fold(data, split, config, fold_options(options.train, fold, run.size() > 1),
                                    options.device, fold);
    std::printf("fold %lld: test %.2f %%  valid %.2f %%  (best epoch %lld)  %.1f ms/epoch  %.0f graphs/s  %.1f s\n",
                static_cast<long long>(fold), 100 * f.test_acc, 100 * f.best_valid_acc,
                static_cast<long long>(f.best_epoch), f.epoch_ms_median, f.graphs_per_second, f.seconds);
    std::fflush(stdout);
    test.push_back(f.test_acc);
    valid.push_back(f.best_valid_acc);
    epoch_ms.push_back(f.epoch_ms_median);
    r.folds.push_back(f);
  }
  const auto n = static_cast<double>(test.size());
  r.test_acc_mean = std::accumulate(test.begin(), test.end(), 0.0) / n;
  r.valid_acc_mean = std::accumulate(valid.begin(), valid.end(), 0.0) / n;
  double ss = 0;
  for (double t : test) ss += (t - r.test_acc_mean) * (t - r.test_acc_mean);
  r.test_acc_std = test.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
  std::sort(epoch_ms.begin(), epoch_ms.end());
  r.epoch_ms_median = epoch_ms[epoch_ms.size() / 2];
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\ngin on %s: test accuracy %.2f ± %.2f %% over %zu fold(s) (valid %.2f %%), %.1f ms/epoch (median), "
              "%.1f s\n",
              r.dataset.c_str(), 100 * r.test_acc_mean, 100 * r.test_acc_std, test.size(), 100 * r.valid_acc_mean,
              r.epoch_ms_median, r.seconds);
  std::fflush(stdout);
  return r;
}

}  // namespace edgewise::gnn
