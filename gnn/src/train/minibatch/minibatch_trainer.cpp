// MiniBatchTrainer: epochs of NeighborSampler minibatches (shuffled or loss-
// prioritised seeds), Adam steps, full-batch evaluation, model selection.
#include "edgewise/gnn/train/minibatch_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/sampling/subgraph_blocks.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"
#include "train/checkpoint.hpp"
#include "train/node_evaluation.hpp"

namespace edgewise::gnn {

namespace {
using train_detail::Clock;
using train_detail::seconds_between;

// A permutation of `nodes` from Philox keys of one generator stream (sort_by_key of
// the keys, stable, so ties — vanishingly rare — keep their order).
std::vector<int64_t> shuffled(const std::vector<int64_t>& nodes, uint64_t seed, uint64_t stream) {
  const int64_t n = static_cast<int64_t>(nodes.size());
  std::vector<uint32_t> keys(static_cast<size_t>(n)), sorted(static_cast<size_t>(n));
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[i] = philox_block(seed, stream, static_cast<uint64_t>(i)).v[0];
  sort_by_key<uint32_t>(VectorView<const uint32_t>(keys.data(), n), VectorView<uint32_t>(sorted.data(), n),
                        VectorView<int64_t>(perm.data(), n), trusted_context(Device::cpu()));
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[i] = nodes[perm[i]];
  return out;
}

float priority_of(float loss, const MiniBatchTrainerOptions& o) {
  // A non-finite loss (training on under NonFiniteLoss::Warn) gets the floor priority:
  // the sum tree only takes finite priorities.
  if (!std::isfinite(loss)) loss = 0.0f;
  return std::pow(std::max(loss, 0.0f) + o.priority_eps, o.priority_alpha);
}
}  // namespace

MiniBatchTrainer::MiniBatchTrainer(MiniBatchSAGE& model, const TrainData& data, MiniBatchTrainerOptions options)
    : model_(model),
      data_(data),
      options_(std::move(options)),
      generator_(options_.seed),
      sampler_(data.graph, options_.fanouts),
      gatherer_(data.features),
      train_nodes_(data.train_idx.to_host_vector()),
      labels_(data.labels.to_host_vector()) {
  constexpr const char* kOp = "MiniBatchTrainer";
  EW_REQUIRE(options_.epochs >= 1, kOp, ": epochs (", options_.epochs, ") must be >= 1");
  EW_REQUIRE(options_.batch_size >= 1, kOp, ": batch_size (", options_.batch_size, ") must be >= 1");
  EW_REQUIRE(options_.eval_every >= 1, kOp, ": eval_every (", options_.eval_every, ") must be >= 1");
  EW_REQUIRE(!train_nodes_.empty(), kOp, ": the training split (train_idx) of '", data.name, "' is empty");
  EW_REQUIRE(data.valid_idx.numel() > 0 || (options_.selection == ModelSelection::LastEpoch && options_.patience == 0),
             kOp, ": the validation split (valid_idx) of '", data.name,
             "' is empty: best-valid selection and early stopping need it (use ModelSelection::LastEpoch, patience 0)");
  EW_REQUIRE(static_cast<int64_t>(options_.fanouts.size()) == model.num_layers(), kOp, ": ", options_.fanouts.size(),
             " fanouts for a model of ", model.num_layers(), " layers");
  train_detail::check_checkpoint_options(kOp, options_.checkpoint_every, options_.checkpoint_path);
  const DataParallel& dp = options_.data_parallel;
  EW_REQUIRE(dp.world_size >= 1 && dp.rank >= 0 && dp.rank < dp.world_size, kOp, ": data_parallel rank ", dp.rank,
             " of world_size ", dp.world_size);
  EW_REQUIRE(dp.world_size == 1 || (dp.sum_gradients && dp.sum), kOp,
             ": data_parallel over several processes needs sum_gradients and sum");
  EW_REQUIRE(dp.world_size == 1 || options_.seed_order == SeedOrder::Shuffle, kOp,
             ": data_parallel supports SeedOrder::Shuffle only");
  EW_REQUIRE(options_.pipeline_threads >= 0, kOp, ": pipeline_threads (", options_.pipeline_threads,
             ") must be >= 0");
  if (options_.pipeline_threads > 0) {
    EW_REQUIRE(options_.seed_order == SeedOrder::Shuffle && dp.world_size == 1, kOp,
               ": pipeline_threads needs SeedOrder::Shuffle on one process");
    pipeline_ = make_pipeline();
  }
}

std::unique_ptr<BatchPipeline> MiniBatchTrainer::make_pipeline() {
  // The graph's CSR by destination is the sampler's CSC.
  const Graph host = data_.graph.device().is_cpu() ? data_.graph : data_.graph.to(Device::cpu());
  auto csc = std::make_shared<CscGraph>();
  csc->colptr = host.offsets().to_host_vector();
  csc->row32 = host.sources().to_host_vector();  // 32-bit ids, as the engine's graphs keep them
  HopSamplerOptions sampling;
  sampling.num_neighbors.assign(options_.fanouts.rbegin(), options_.fanouts.rend());
  BatchPipelineOptions o;
  o.batch_size = options_.batch_size;
  o.shuffle = true;
  o.seed = options_.seed;
  o.num_threads = options_.pipeline_threads;
  std::vector<RowTable> tables;
  if (!data_.features.is_sparse()) {  // sparse features: gathered in the training thread
    host_features_ = data_.features.dense.device().is_cpu() ? data_.features.dense
                                                            : data_.features.dense.to(Device::cpu());
    tables.push_back({reinterpret_cast<const std::byte*>(host_features_.data()), host_features_.rows(),
                      host_features_.cols() * static_cast<int64_t>(sizeof(float))});
  }
  return std::make_unique<BatchPipeline>(std::move(csc), std::move(sampling), train_nodes_, std::vector<int64_t>{},
                                         std::move(tables), std::vector<RowTable>{}, o);
}

double MiniBatchTrainer::evaluate(const IndexTensor& rows) {
  return ops::accuracy(train_detail::eval_scores(model_, data_, generator_), data_.labels, rows);
}

MiniBatchTrainResult MiniBatchTrainer::fit() {
  check_train_options("MiniBatchTrainer", options_);
  auto optimizer = make_optimizer(model_.param_groups(options_.weight_decay), options_);
  const int64_t n_train = static_cast<int64_t>(train_nodes_.size());
  const int64_t B = std::min(options_.batch_size, n_train);
  const int64_t batches = (n_train + B - 1) / B;
  std::unique_ptr<SeedSampler> seeds;
  if (options_.seed_order == SeedOrder::LossPrioritized) {
    seeds = std::make_unique<SeedSampler>(SeedSampler::uniform(data_.graph.num_nodes(), train_nodes_));
  }
  MiniBatchTrainResult result;
  result.batches_per_epoch = batches;
  std::vector<double> rates;
  double sample_seconds = 0, train_seconds = 0, epoch_sample_seconds = 0;
  train_detail::LossGuard loss_guard("MiniBatchTrainer", options_.nonfinite_loss);
  const DataParallel& dp = options_.data_parallel;

  EpochLoop loop;
  loop.name = data_.name;
  loop.selection = train_detail::node_selection();
  loop.train_step = [&](EpochRecord& rec) {
    model_.train();
    const auto t0 = Clock::now();
    const std::vector<int64_t> order =
        seeds ? std::vector<int64_t>{} : shuffled(train_nodes_, generator_.seed(), generator_.next_stream());
    double loss_sum = 0;
    epoch_sample_seconds = 0;
    if (pipeline_) pipeline_->start_epoch(static_cast<uint64_t>(rec.epoch));
    for (int64_t b = 0; b < batches; ++b) {
      if (pipeline_) {
        const auto s0 = Clock::now();
        SampledBatch batch;
        while (pipeline_->next(batch, std::chrono::milliseconds(1000)) == BatchPipeline::Next::Timeout) {
        }
        const MiniBatch mb = to_minibatch(batch.subgraph, data_.graph.device());
        const int64_t n = static_cast<int64_t>(batch.subgraph.node.size());
        const NodeFeatures x =
            batch.node_rows.empty()
                ? gatherer_.gather(mb.input_nodes)
                : NodeFeatures{Tensor::from_host(std::span<const float>(
                                                     reinterpret_cast<const float*>(batch.node_rows[0]->data),
                                                     static_cast<size_t>(n * host_features_.cols())),
                                                 n, host_features_.cols(), data_.graph.device()),
                               {}};
        epoch_sample_seconds += seconds_between(s0, Clock::now());
        const int64_t seeds_in_batch = batch.subgraph.num_sampled_nodes[0];
        std::vector<int64_t> batch_labels(static_cast<size_t>(seeds_in_batch));
        for (int64_t i = 0; i < seeds_in_batch; ++i) batch_labels[i] = labels_[batch.subgraph.node[i]];
        const std::vector<float> weights(static_cast<size_t>(seeds_in_batch),
                                         1.0f / static_cast<float>(seeds_in_batch));
        optimizer->zero_grad();
        Variable logits = model_.forward(mb, x, generator_);
        Variable loss = weighted_cross_entropy(logits, batch_labels, weights);
        const double batch_loss = loss.value().to_host_vector()[0];
        loss_guard.check(batch_loss, rec.epoch, b);
        loss.backward();
        optimizer->step();
        loss_sum += batch_loss;
        continue;
      }
      // The batch's seeds and their loss weights.
      std::vector<int64_t> batch_nodes;
      std::vector<float> weights;
      if (seeds) {
        const SeedBatch sb = seeds->sample(B, philox_block(generator_.seed(), generator_.next_stream(), 0).v[0]);
        batch_nodes = sb.nodes;
        weights = sb.weights;
      } else {
        const int64_t lo = b * B, hi = std::min(n_train, lo + B);
        // This process's slice of the batch (all of it with one process).
        const int64_t first = lo + (hi - lo) * dp.rank / dp.world_size;
        const int64_t last = lo + (hi - lo) * (dp.rank + 1) / dp.world_size;
        batch_nodes.assign(order.begin() + first, order.begin() + last);
        weights.assign(batch_nodes.size(), 1.0f / static_cast<float>(hi - lo));
      }
      if (batch_nodes.empty()) {
        // A batch smaller than the process count leaves this process nothing: it
        // still takes part in the sums, adding 0, and steps with everyone.
        optimizer->zero_grad();
        loss_sum += dp.sum(0.0);
        dp.sum_gradients(model_.parameters());
        optimizer->step();
        continue;
      }
      const auto s0 = Clock::now();
      const MiniBatch mb = sampler_.sample(batch_nodes, generator_);
      const NodeFeatures x = gatherer_.gather(mb.input_nodes);
      epoch_sample_seconds += seconds_between(s0, Clock::now());

      std::vector<int64_t> batch_labels(batch_nodes.size());
      for (size_t i = 0; i < batch_nodes.size(); ++i) batch_labels[i] = labels_[batch_nodes[i]];
      optimizer->zero_grad();
      Variable logits = model_.forward(mb, x, generator_);
      std::vector<float> per_node;
      Variable loss = weighted_cross_entropy(logits, batch_labels, weights, seeds ? &per_node : nullptr);
      double batch_loss = loss.value().to_host_vector()[0];
      if (dp.world_size > 1) batch_loss = dp.sum(batch_loss);
      loss_guard.check(batch_loss, rec.epoch, b);
      loss.backward();
      if (dp.world_size > 1) dp.sum_gradients(model_.parameters());
      optimizer->step();
      loss_sum += batch_loss;
      if (seeds) {
        std::vector<float> priority(per_node.size());
        for (size_t i = 0; i < per_node.size(); ++i) priority[i] = priority_of(per_node[i], options_);
        seeds->update_priorities(batch_nodes, priority);
      }
    }
    synchronize(data_.labels.device(), engine_stream(data_.labels.device()));
    const double epoch_seconds = seconds_between(t0, Clock::now());
    rec.epoch_ms = epoch_seconds * 1e3;
    rec.loss = loss_sum / static_cast<double>(batches);
    rates.push_back(static_cast<double>(batches) / epoch_seconds);
    sample_seconds += epoch_sample_seconds;
    train_seconds += epoch_seconds;
  };
  loop.evaluate = [&](EpochRecord& rec) {
    train_detail::score_epoch(train_detail::eval_scores(model_, data_, generator_), data_, rec);
  };
  loop.progress_tail = [&](const EpochRecord& rec) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f batches/s  (%.0f%% sampling)", rates.empty() ? 0.0 : rates.back(),
                  100.0 * epoch_sample_seconds / std::max(rec.epoch_ms / 1e3, 1e-12));
    return std::string(buf);
  };
  run_training(options_, loop, TrainingState{model_, *optimizer, generator_, &seeds}, result);
  std::sort(rates.begin(), rates.end());
  result.batches_per_second = rates.empty() ? 0.0 : rates[rates.size() / 2];  // empty: resumed with nothing to run
  result.sampling_fraction = train_seconds > 0 ? sample_seconds / train_seconds : 0.0;
  return result;
}

}  // namespace edgewise::gnn
