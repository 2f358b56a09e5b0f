// edgewise-train --sampled 15,10,5: node classification with GraphSAGE trained on
// sampled neighbourhoods (MiniBatchTrainer on a BatchPipeline), --runs seeded runs.
#include <cstdio>
#include <sstream>

#include "app.hpp"
#include "edgewise/gnn/nn/minibatch_sage.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

int run_sampled_node_runs(const Flags& f, const Dataset& dataset, const TrainData& data, const std::string& identity,
                          Device device) {
  const std::vector<int64_t> hops = *parse_hops(f.sampled);  // validated with the flags
  ModelConfig config;
  config.kind = ModelKind::GraphSAGE;
  config.in_features = data.features.cols();
  config.hidden_features = f.hidden;
  config.out_features = data.num_classes;
  config.layers = static_cast<int64_t>(hops.size());
  config.dropout = f.dropout;
  config.sage_aggregator = parse_sage_aggregator(f.sage_aggr);
  const int64_t batch_size = f.has("--batch-size") ? f.batch_size : 512;

  NodeRuns runs(f, device);
  for (int64_t r = 0; r < f.runs; ++r) {
    const uint64_t seed = f.seed + static_cast<uint64_t>(r);
    Generator generator(seed);
    MiniBatchSAGE model(config, generator, device);
    MiniBatchTrainerOptions options;
    static_cast<TrainOptions&>(options) = train_options(f, options);
    options.seed = seed;
    options.log_every = r > 0 ? 0 : f.log_every;
    options.fanouts.assign(hops.rbegin(), hops.rend());  // the trainer lists layers outermost first
    options.batch_size = batch_size;
    options.pipeline_threads = static_cast<int>(f.sampler_threads);
    options.run_tags = common_run_tags(f, identity, options);
    options.run_tags.insert(options.run_tags.end(), {{"--sampled", f.sampled},
                                                     {"--model", "sage"},
                                                     {"--hidden", std::to_string(f.hidden)},
                                                     {"--sage-aggr", f.sage_aggr},
                                                     {"--batch-size", std::to_string(batch_size)},
                                                     {"--features", f.features},
                                                     {"--normalize-features", std::to_string(f.normalize_features)}});
    if (r == 0) {
      std::printf("model: %s, %lld parameters; sampled: %s neighbours per hop, %lld seeds per batch, %lld sampling "
                  "thread(s)\n",
                  model.describe().c_str(), static_cast<long long>(model.num_parameters()), f.sampled.c_str(),
                  static_cast<long long>(batch_size), static_cast<long long>(f.sampler_threads));
    }
    MiniBatchTrainer trainer(model, data, options);
    MiniBatchTrainResult result = trainer.fit();
    std::printf("run %lld/%lld (seed %llu): test %.2f %%  valid %.2f %%  (best epoch %lld)  %.1f batches/s, "
                "%.0f %% of training waiting for batches  %.2f s\n",
                static_cast<long long>(r + 1), static_cast<long long>(f.runs), static_cast<unsigned long long>(seed),
                100 * result.test_acc, 100 * result.best_valid_acc, static_cast<long long>(result.best_epoch),
                result.batches_per_second, 100 * result.sampling_fraction, result.total_seconds);
    runs.add(std::move(result));
  }
  return runs.finish("graphsage", dataset.name, "GraphSAGE (sampled " + f.sampled + ")", {{"sampled", f.sampled}});
}

}  // namespace edgewise::apps::train
