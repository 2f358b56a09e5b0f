// Training minibatch GraphSAGE (nn/minibatch_sage.hpp) on sampled blocks: shuffled or
// loss-prioritised seed batches, full-batch evaluation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "edgewise/gnn/sampling/batch_pipeline.hpp"
#include "edgewise/gnn/sampling/seed_sampler.hpp"
#include "edgewise/gnn/nn/minibatch_sage.hpp"
#include "edgewise/gnn/train/train_options.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::gnn {

// How seed batches are formed each epoch.
enum class SeedOrder {
  // A fresh permutation of the training nodes per epoch (Philox keys, sort_by_key),
  // cut into batches: every node once per epoch; plain mean loss.
  Shuffle,
  // SeedSampler over the training nodes with priority (loss + eps)^alpha, updated from
  // each batch's per-node losses; the loss is importance-weighted (unbiased for the
  // mean training loss); ceil(|train| / batch_size) batches per epoch.
  LossPrioritized,
};

// Data parallelism over several processes (the graph replicated in each; edgewise::dist
// provides the reductions over MPI, dist::data_parallel): every process draws the same
// seed order and takes its contiguous slice of each batch's seeds; a seed's loss weight
// is 1 / (seeds in the whole batch), and the gradients are summed over the processes
// before every step, so a step is the single-process step on the whole batch (equal in
// expectation; equal up to rounding when the sampler takes whole neighbourhoods and
// dropout is 0). Shuffled seeds only.
struct DataParallel {
  int64_t rank = 0, world_size = 1;
  std::function<void(const std::vector<Variable>& params)> sum_gradients;  // in place, a missing gradient is 0
  std::function<double(double)> sum;                                        // a scalar over the processes
};

// TrainOptions (epochs, lr, schedule, seed — sampling, shuffling and dropout streams —,
// eval_every, patience, selection, output files, checkpoints, ...; the loss is checked
// per batch) and what minibatches add. Checkpoints hold the loss-prioritised seed
// sampler's priorities too. The last epoch is always evaluated, so resuming from a
// checkpoint taken at an epoch that is not a multiple of eval_every reports one more
// evaluation than the uninterrupted run; at a multiple it is bitwise the same.
struct MiniBatchTrainerOptions : TrainOptions {
  MiniBatchTrainerOptions() {
    epochs = 20;
    log_every = 1;
  }
  std::vector<int64_t> fanouts{10, 25};  // NeighborSampler order: the last entry samples the seeds' neighbours
  int64_t batch_size = 512;
  SeedOrder seed_order = SeedOrder::Shuffle;
  float priority_alpha = 0.6f;  // LossPrioritized: priority = (loss + priority_eps)^alpha
  float priority_eps = 1e-2f;
  DataParallel data_parallel;  // world_size 1: one process
  // > 0: batches come from a BatchPipeline (batch_pipeline.hpp) with this many
  // sampling threads working ahead of training: hop-wise sampling with PyG's
  // semantics (HopSampler; fanouts read from the seeds outwards in reverse, i.e. the
  // last entry still samples the seeds' neighbours), blocks as PyG's trim_to_layer
  // gives them, dense host features gathered on those threads. The epoch's order is
  // a function of (seed, epoch). Shuffled seeds on one process only.
  int pipeline_threads = 0;
};

struct MiniBatchTrainResult : TrainResult {
  int64_t batches_per_epoch = 0;
  double batches_per_second = 0;  // median over epochs (sampling + gather + step)
  double sampling_fraction = 0;   // share of training time spent sampling blocks
};

// Trains `model` on data.train_idx with NeighborSampler minibatches and Adam;
// evaluates full-batch on train/valid/test and keeps the selected epoch's
// metrics (EpochRecord::epoch_ms is the training time of the epoch).
class MiniBatchTrainer {
 public:
  MiniBatchTrainer(MiniBatchSAGE& model, const TrainData& data, MiniBatchTrainerOptions options);
  MiniBatchTrainResult fit();
  double evaluate(const IndexTensor& rows);

 private:
  std::unique_ptr<BatchPipeline> make_pipeline();

  MiniBatchSAGE& model_;
  const TrainData& data_;
  MiniBatchTrainerOptions options_;
  Generator generator_;
  NeighborSampler sampler_;
  FeatureGatherer gatherer_;
  std::unique_ptr<BatchPipeline> pipeline_;  // pipeline_threads > 0
  Tensor host_features_;                     // what the pipeline gathers from (dense, on the host)
  std::vector<int64_t> train_nodes_, labels_;
};

}  // namespace edgewise::gnn
