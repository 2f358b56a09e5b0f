// edgewise-train --task graph: k-fold GIN graph classification on a graph collection.
#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app.hpp"
#include "edgewise/gnn/train/graph_classification.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

int run_graph_task(const Flags& f) {
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
  // The GIN example's recipe where the flags leave it open (GraphTrainOptions' defaults).
  static_cast<TrainOptions&>(o.train) = train_options(f, o.train);
  o.train.batch_size = f.batch_size;
  o.train.run_tags = common_run_tags(f, f.dataset, o.train);
  const auto text = [](auto value) { return std::to_string(value); };
  for (const auto& tag : RunTags{{"--layers", text(o.model.layers)},
                                 {"--hidden", text(o.model.hidden_features)},
                                 {"--dropout", text(o.model.dropout)},
                                 {"--pooling", f.pooling},
                                 {"--batch-norm", text(f.batch_norm)},
                                 {"--batch-size", text(f.batch_size)},
                                 {"--num-folds", text(f.num_folds)}})
    o.train.run_tags.push_back(tag);
  o.device = Device::parse(f.device);
  o.save_folds = f.save_folds;
  const GraphTaskResult r = gnn::run_graph_task(o);
  for (const FoldResult& fold : r.folds)
    write_run_files(f, fold, r.dataset + " fold " + std::to_string(fold.fold),
                    r.folds.size() > 1 ? ".fold" + std::to_string(fold.fold) : "");
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

}  // namespace edgewise::apps::train
