// MiniBatchTrainer: epochs of NeighborSampler minibatches (shuffled or loss-
// prioritised seeds), Adam steps, full-batch evaluation, model selection.
#include "edgewise/gnn/train/minibatch_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "edgewise/kernels/sort_by_key.hpp"
#include "train/checkpoint.hpp"
#include "edgewise/gnn/train/epoch_selection.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"

namespace edgewise::gnn {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

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
}

double MiniBatchTrainer::evaluate(const IndexTensor& rows) {
  return ops::accuracy(train_detail::eval_scores(model_, data_, generator_), data_.labels, rows);
}

MiniBatchTrainResult MiniBatchTrainer::fit() {
  AdamOptions adam;
  adam.lr = options_.lr;
  Adam optimizer(model_.param_groups(options_.weight_decay), adam);
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
  double sample_seconds = 0, train_seconds = 0;
  train_detail::EpochSelector selector(options_.selection);
  train_detail::LossGuard loss_guard("MiniBatchTrainer", options_.nonfinite_loss);
  int64_t since_best = 0;
  const auto start = Clock::now();
  const train_detail::RunState run{model_, optimizer, generator_, selector, result, &seeds, &options_.run_tags};
  int64_t first_epoch = 1;
  double resumed_seconds = 0;  // training time before the checkpoint
  if (!options_.resume_path.empty()) {
    first_epoch = train_detail::resume_from_checkpoint(options_.resume_path, options_.epochs, run, resumed_seconds);
    since_best = selector.state().since_best;
  }
  auto checkpoint = [&](int64_t epoch) {
    train_detail::save_checkpoint(options_.checkpoint_path, epoch, run,
                                  resumed_seconds + seconds_between(start, Clock::now()));
  };
  for (int64_t epoch = first_epoch; epoch <= options_.epochs; ++epoch) {
    EpochRecord rec;
    rec.epoch = epoch;
    model_.train();
    const auto t0 = Clock::now();
    const std::vector<int64_t> order =
        seeds ? std::vector<int64_t>{} : shuffled(train_nodes_, generator_.seed(), generator_.next_stream());
    double loss_sum = 0, epoch_sample_seconds = 0;
    for (int64_t b = 0; b < batches; ++b) {
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
        const DataParallel& dp = options_.data_parallel;
        const int64_t first = lo + (hi - lo) * dp.rank / dp.world_size;
        const int64_t last = lo + (hi - lo) * (dp.rank + 1) / dp.world_size;
        batch_nodes.assign(order.begin() + first, order.begin() + last);
        weights.assign(batch_nodes.size(), 1.0f / static_cast<float>(hi - lo));
      }
      if (batch_nodes.empty()) {
        // A batch smaller than the process count leaves this process nothing: it
        // still takes part in the sums, adding 0, and steps with everyone.
        optimizer.zero_grad();
        loss_sum += options_.data_parallel.sum(0.0);
        options_.data_parallel.sum_gradients(model_.parameters());
        optimizer.step();
        continue;
      }
      const auto s0 = Clock::now();
      const MiniBatch mb = sampler_.sample(batch_nodes, generator_);
      const NodeFeatures x = gatherer_.gather(mb.input_nodes);
      epoch_sample_seconds += seconds_between(s0, Clock::now());

      std::vector<int64_t> batch_labels(batch_nodes.size());
      for (size_t i = 0; i < batch_nodes.size(); ++i) batch_labels[i] = labels_[batch_nodes[i]];
      optimizer.zero_grad();
      Variable logits = model_.forward(mb, x, generator_);
      std::vector<float> per_node;
      Variable loss = weighted_cross_entropy(logits, batch_labels, weights, seeds ? &per_node : nullptr);
      double batch_loss = loss.value().to_host_vector()[0];
      if (options_.data_parallel.world_size > 1) batch_loss = options_.data_parallel.sum(batch_loss);
      loss_guard.check(batch_loss, epoch, b);
      loss.backward();
      if (options_.data_parallel.world_size > 1) options_.data_parallel.sum_gradients(model_.parameters());
      optimizer.step();
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

    const bool evaluate_now = epoch % options_.eval_every == 0 || epoch == options_.epochs;
    if (evaluate_now) {
      train_detail::score_epoch(train_detail::eval_scores(model_, data_, generator_), data_, rec);
      since_best = selector.observe(rec, result);
    }
    result.history.push_back(rec);
    if (options_.log_every > 0 && (epoch % options_.log_every == 0 || epoch == 1 || epoch == options_.epochs)) {
      if (evaluate_now) {
        std::printf("epoch %4lld/%lld  loss %.4f  train %.3f  valid %.3f  test %.3f  %.1f batches/s  (%.0f%% sampling)\n",
                    static_cast<long long>(epoch), static_cast<long long>(options_.epochs), rec.loss, rec.train_acc,
                    rec.valid_acc, rec.test_acc, rates.back(), 100.0 * epoch_sample_seconds / epoch_seconds);
      } else {
        std::printf("epoch %4lld/%lld  loss %.4f  %.1f batches/s  (%.0f%% sampling)\n",
                    static_cast<long long>(epoch), static_cast<long long>(options_.epochs), rec.loss, rates.back(),
                    100.0 * epoch_sample_seconds / epoch_seconds);
      }
      std::fflush(stdout);
    }
    if (options_.checkpoint_every > 0 && epoch % options_.checkpoint_every == 0 && epoch < options_.epochs) {
      checkpoint(epoch);
    }
    if (evaluate_now && options_.patience > 0 && since_best >= options_.patience) {
      result.stopped_early = true;
      break;
    }
  }
  if (!options_.checkpoint_path.empty() && !result.history.empty()) checkpoint(result.history.back().epoch);
  result.total_seconds = resumed_seconds + seconds_between(start, Clock::now());
  selector.finish(result);
  std::sort(rates.begin(), rates.end());
  result.batches_per_second = rates.empty() ? 0.0 : rates[rates.size() / 2];  // empty: resumed with nothing to run
  result.sampling_fraction = train_seconds > 0 ? sample_seconds / train_seconds : 0.0;
  return result;
}

}  // namespace edgewise::gnn
