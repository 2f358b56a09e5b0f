// edgewise-train --task node (the default): full-batch node classification, --runs
// seeded runs of a GCN, GraphSAGE, GIN or GAT, with progress, a summary and the files.
#include <chrono>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "app.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/graph/reorder.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/gnn/train/trainer.hpp"
#include "edgewise/kernels/common/memory.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

namespace {

// What a checkpoint must have been written with to be resumed by this run: the
// shared settings and the model's (effective values, defaults included).
RunTags run_tags(const Flags& f, const std::string& identity, const ModelConfig& config,
                 const TrainOptions& options) {
  const auto text = [](auto value) {
    std::ostringstream out;
    out << value;
    return out.str();
  };
  RunTags tags = common_run_tags(f, identity, options);
  const RunTags model = {{"--model", to_string(config.kind)},
                         {"--layers", text(config.layers)},
                         {"--hidden", text(config.hidden_features)},
                         {"--dropout", text(config.dropout)},
                         {"--features", f.features},
                         {"--normalize-features", text(f.normalize_features)},
                         {"--aggregation", f.aggregation},
                         {"--form", f.form},
                         {"--deterministic", text(f.deterministic)},
                         {"--reorder", f.reorder},
                         {"--undirected", f.edges.undirected_text()},
                         {"--self-loops", f.edges.self_loops_text()}};
  tags.insert(tags.end(), model.begin(), model.end());
  if (config.kind == ModelKind::GraphSAGE) tags.emplace_back("--sage-aggr", f.sage_aggr);
  if (config.kind == ModelKind::Gat) {
    tags.emplace_back("--heads", text(config.gat_heads));
    tags.emplace_back("--output-heads", text(config.gat_output_heads));
    tags.emplace_back("--attention-dropout", text(config.attention_dropout));
  }
  return tags;
}

}  // namespace

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

int run_node_task(const Flags& f) {
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

  if (!f.sampled.empty()) return run_sampled_node_runs(f, dataset, data, identity, device);
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

  NodeRuns runs(f, device);
  for (int64_t r = 0; r < f.runs; ++r) {
    const uint64_t seed = f.seed + static_cast<uint64_t>(r);
    Generator generator(seed);
    auto model = make_model(config, generator, device);
    if (r == 0) std::printf("model: %s, %lld parameters\n", model->describe().c_str(),
                            static_cast<long long>(model->num_parameters()));
    // Velickovic et al.'s schedule for GAT where the flags leave it open.
    TrainOptions defaults;
    if (gat) {
      defaults.epochs = 1000;
      defaults.lr = 0.005f;
      defaults.patience = 100;
    }
    TrainOptions options = train_options(f, defaults);
    options.seed = seed;
    options.log_every = r > 0 ? 0 : f.log_every;
    options.run_tags = run_tags(f, identity, config, options);
    // The output files are written below, after the summary, so that a failed
    // write never loses the results.
    Trainer trainer(*model, data, options);
    TrainResult result = trainer.fit();
    std::printf("run %lld/%lld (seed %llu): test %.2f %%  valid %.2f %%  (best epoch %lld)  %.3f ms/epoch  %.2f s\n",
                static_cast<long long>(r + 1), static_cast<long long>(f.runs), static_cast<unsigned long long>(seed),
                100 * result.test_acc, 100 * result.best_valid_acc, static_cast<long long>(result.best_epoch),
                result.epoch_ms_median, result.total_seconds);
    runs.add(std::move(result));
  }
  return runs.finish(to_string(config.kind), dataset.name, to_string(config.kind));
}

NodeRuns::NodeRuns(const Flags& f, Device device) : f_(f), device_(device) {
  reset_peak_memory(device);
  baseline_bytes_ = memory_stats(device).current_bytes;
}

void NodeRuns::add(TrainResult result) {
  test_.push_back(result.test_acc);
  valid_.push_back(result.best_valid_acc);
  train_.push_back(result.train_acc);
  epoch_ms_.push_back(result.epoch_ms_median);
  seconds_.push_back(result.total_seconds);
  if (test_.size() == 1) first_run_ = std::move(result);
}

int NodeRuns::finish(const std::string& model, const std::string& dataset, const std::string& label,
                     nlohmann::ordered_json extra) {
  const double ms_median = median(epoch_ms_);
  std::printf("\n%s on %s: test accuracy %.2f ± %.2f %% over %lld run(s) (valid %.2f %%), %.3f ms/epoch (median), "
              "%.2f s per run\n",
              label.c_str(), dataset.c_str(), 100 * mean(test_), 100 * stddev(test_),
              static_cast<long long>(test_.size()), 100 * mean(valid_), ms_median, mean(seconds_));
  const double peak_mb = static_cast<double>(memory_stats(device_).peak_bytes - baseline_bytes_) / 1e6;
  std::printf("peak memory during training (beyond the loaded data): %.1f MB on %s\n", peak_mb, device_.str().c_str());
  std::fflush(stdout);

  write_run_files(f_, first_run_, dataset);
  if (!f_.json.empty()) {
    nlohmann::ordered_json out = node_task_json(dataset, model, device_.str(), static_cast<int64_t>(test_.size()),
                                                test_, valid_, train_, ms_median, seconds_, f_);
    for (const auto& [key, value] : extra.items()) out[key] = value;
    out["peak_training_memory_mb"] = peak_mb;
    cli::write_json_file(f_.json, out);
    std::printf("final metrics: %s\n", f_.json.c_str());
  }
  return 0;
}


}  // namespace edgewise::apps::train
