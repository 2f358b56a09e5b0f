// edgewise-train --task link (see train_link.hpp).
#include "train_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "edgewise/cli/json_file.hpp"
#include "edgewise/gnn/train/link_prediction.hpp"

namespace edgewise::examples {

namespace {

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double stddev(const std::vector<double>& v) {  // sample standard deviation, 0 for one run
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

int run_link_task(const gnn::Dataset& dataset, const std::string& source, const LinkTaskSettings& s) {
  using namespace edgewise::gnn;
  const Device device = Device::parse(s.device);
  // Node features only: the labels and node splits play no part here.
  PrepareOptions prepare_options = s.prepare;
  prepare_options.require_labels = false;
  const TrainData data = prepare(dataset, device, prepare_options);
  std::vector<double> test_auc, test_hits, valid_auc, epoch_ms, seconds;
  for (int64_t r = 0; r < s.runs; ++r) {
    const uint64_t seed = s.seed + static_cast<uint64_t>(r);
    LinkSplitOptions split_options;
    split_options.num_val = s.num_val;
    split_options.num_test = s.num_test;
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
    LinkTrainOptions options;
    options.layers = s.layers;
    options.hidden_features = s.hidden;
    options.out_features = s.out;
    options.dropout = s.dropout;
    options.lr = s.lr;
    options.weight_decay = s.weight_decay;
    options.epochs = s.epochs;
    options.hits_k = s.hits_k;
    options.seed = seed;
    options.log_every = r > 0 ? 0 : s.log_every;
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
                static_cast<long long>(r + 1), static_cast<long long>(s.runs), static_cast<unsigned long long>(seed),
                result.test_auc, static_cast<long long>(s.hits_k), result.test_hits_at_k, result.best_valid_auc,
                static_cast<long long>(result.best_epoch), result.epoch_ms_median, result.total_seconds);
    std::fflush(stdout);
  }
  std::printf("\nlink prediction on %s: test AUC %.4f ± %.4f, Hits@%lld %.4f ± %.4f over %lld run(s) (valid AUC "
              "%.4f), %.2f s per run\n",
              dataset.name.c_str(), mean(test_auc), stddev(test_auc), static_cast<long long>(s.hits_k),
              mean(test_hits), stddev(test_hits), static_cast<long long>(s.runs), mean(valid_auc), mean(seconds));
  std::fflush(stdout);
  if (!s.json.empty()) {
    std::vector<double> ms = epoch_ms;
    std::sort(ms.begin(), ms.end());
    nlohmann::ordered_json out = {{"dataset", dataset.name},
                                  {"task", "link"},
                                  {"model", "gcn"},
                                  {"device", device.str()},
                                  {"runs", s.runs},
                                  {"hits_k", s.hits_k},
                                  {"test_auc_mean", mean(test_auc)},
                                  {"test_auc_std", stddev(test_auc)},
                                  {"test_hits_at_k", mean(test_hits)},
                                  {"test_hits_at_k_std", stddev(test_hits)},
                                  {"valid_auc_mean", mean(valid_auc)},
                                  {"epoch_ms_median", ms[ms.size() / 2]},
                                  {"seconds_per_run", mean(seconds)},
                                  {"test_auc", test_auc},
                                  {"test_hits", test_hits}};
    cli::write_json_file(s.json, out);
    std::printf("final metrics: %s\n", s.json.c_str());
  }
  return 0;
}

}  // namespace edgewise::examples
