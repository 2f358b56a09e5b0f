// edgewise-train --task link: link prediction (GCN encoder, dot-product decoder, PyG
// link_pred.py's recipe) on a dataset's edges, --runs seeded runs with their own splits.
#include <cstdio>
#include <string>
#include <vector>

#include "app.hpp"
#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/gnn/train/link_prediction.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

int run_link_task(const Flags& f) {
  const Device device = Device::parse(f.device);
  set_deterministic(f.deterministic);
  std::string source, identity;
  const Dataset dataset = load(f, source, &identity);
  // Node features only: the labels and node splits play no part here.
  PrepareOptions prepare_options;
  prepare_options.features = parse_feature_format(f.features);
  prepare_options.normalize_features = f.normalize_features;
  prepare_options.require_labels = false;
  const TrainData data = prepare(dataset, device, prepare_options);
  std::vector<double> test_auc, test_hits, valid_auc, epoch_ms, seconds;
  TrainResult first_run;
  for (int64_t r = 0; r < f.runs; ++r) {
    const uint64_t seed = f.seed + static_cast<uint64_t>(r);
    LinkSplitOptions split_options;  // PyG's RandomLinkSplit(0.05, 0.1)
    split_options.seed = seed;
    const LinkSplit split = random_link_split(dataset.src(), dataset.dst(), dataset.num_nodes, split_options);
    if (r == 0) {
      std::printf("edgewise-train --task link: %s — %lld nodes, %lld edges, %lld features, links %lld/%lld/%lld "
                  "(train/valid/test, undirected; valid and test with as many negatives), device %s\n",
                  source.c_str(), static_cast<long long>(dataset.num_nodes),
                  static_cast<long long>(dataset.num_edges()), static_cast<long long>(data.features.cols()),
                  static_cast<long long>(split.train_pos.size()), static_cast<long long>(split.valid_pos.size()),
                  static_cast<long long>(split.test_pos.size()), device.str().c_str());
    }
    // PyG link_pred.py's recipe where the flags leave it open.
    LinkTrainOptions options;
    static_cast<TrainOptions&>(options) = train_options(f, options);
    if (f.has("--layers")) options.layers = f.layers;
    if (f.has("--hidden")) options.hidden_features = f.hidden;
    if (f.has("--dropout")) options.dropout = f.dropout;
    options.hits_k = f.hits_k;
    options.seed = seed;
    options.log_every = r > 0 ? 0 : f.log_every;
    options.run_tags = common_run_tags(f, identity, options);
    const auto text = [](auto value) { return std::to_string(value); };
    for (const auto& tag : RunTags{{"--layers", text(options.layers)},
                                   {"--hidden", text(options.hidden_features)},
                                   {"--dropout", text(options.dropout)},
                                   {"--hits-k", text(options.hits_k)},
                                   {"--features", f.features},
                                   {"--normalize-features", text(f.normalize_features)},
                                   {"--undirected", f.edges.undirected_text()},
                                   {"--self-loops", f.edges.self_loops_text()}})
      options.run_tags.push_back(tag);
    const LinkTrainResult result = train_link_predictor(split, data.features, options, device);
    if (r == 0) {
      std::printf("model: %s, %lld parameters\n", result.model_description.c_str(),
                  static_cast<long long>(result.num_parameters));
    }
    test_auc.push_back(result.test_auc);
    test_hits.push_back(result.test_hits_at_k);
    valid_auc.push_back(result.best_valid_auc);
    epoch_ms.push_back(result.epoch_ms_median);
    seconds.push_back(result.total_seconds);
    std::printf("run %lld/%lld (seed %llu): test auc %.4f  hits@%lld %.4f  valid auc %.4f  (best epoch %lld)  "
                "%.3f ms/epoch  %.2f s\n",
                static_cast<long long>(r + 1), static_cast<long long>(f.runs), static_cast<unsigned long long>(seed),
                result.test_auc, static_cast<long long>(f.hits_k), result.test_hits_at_k, result.best_valid_auc,
                static_cast<long long>(result.best_epoch), result.epoch_ms_median, result.total_seconds);
    std::fflush(stdout);
    if (r == 0) first_run = result;
  }
  std::printf("\nlink prediction on %s: test AUC %.4f ± %.4f, Hits@%lld %.4f ± %.4f over %lld run(s) (valid AUC "
              "%.4f), %.2f s per run\n",
              dataset.name.c_str(), mean(test_auc), stddev(test_auc), static_cast<long long>(f.hits_k),
              mean(test_hits), stddev(test_hits), static_cast<long long>(f.runs), mean(valid_auc), mean(seconds));
  std::fflush(stdout);
  write_run_files(f, first_run, dataset.name + " (link prediction)");
  if (!f.json.empty()) {
    std::vector<double> ms = epoch_ms;
    std::sort(ms.begin(), ms.end());
    nlohmann::ordered_json out = {{"dataset", dataset.name},
                                  {"task", "link"},
                                  {"model", "gcn"},
                                  {"device", device.str()},
                                  {"runs", f.runs},
                                  {"hits_k", f.hits_k},
                                  {"test_auc_mean", mean(test_auc)},
                                  {"test_auc_std", stddev(test_auc)},
                                  {"test_hits_at_k", mean(test_hits)},
                                  {"test_hits_at_k_std", stddev(test_hits)},
                                  {"valid_auc_mean", mean(valid_auc)},
                                  {"epoch_ms_median", ms[ms.size() / 2]},
                                  {"seconds_per_run", mean(seconds)},
                                  {"test_auc", test_auc},
                                  {"test_hits", test_hits}};
    cli::write_json_file(f.json, out);
    std::printf("final metrics: %s\n", f.json.c_str());
  }
  return 0;
}

}  // namespace edgewise::apps::train
