// edgewise-train --distributed: full-batch node classification over MPI ranks, one
// graph part per rank (dist::fit_distributed); rank 0 prints and writes the files.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "app.hpp"
#include "edgewise/gnn/dist/trainer.hpp"
#include "edgewise/gnn/message_passing/aggregate.hpp"
#include "edgewise/kernels/common/memory.hpp"

namespace edgewise::apps::train {

using namespace edgewise::gnn;

#if EDGEWISE_TRAIN_DISTRIBUTED
// --distributed: one part per MPI rank, fit_distributed (edgewise/gnn/dist/trainer.hpp).
// Rank 0 prints and writes the output files.
int run_distributed(const Flags& f) {
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
  TrainOptions options = train_options(f, TrainOptions{});
  if (!f.metrics.empty()) (f.metrics.ends_with(".json") ? options.metrics_json : options.metrics_csv) = f.metrics;
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

}  // namespace edgewise::apps::train
