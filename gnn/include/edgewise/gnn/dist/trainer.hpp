// Distributed full-batch node classification: each MPI rank holds one part of a
// partitioned graph (edgewise/gnn/dist/partition.hpp) and runs the same GCN,
// GraphSAGE or GIN as the single process, exchanging halo rows before every layer
// after the first (the first reads its halo's input features from the part),
// all-reducing parameter gradients before the optimizer step and reducing losses
// and accuracy counts. It is the single-process run, computed in pieces:
//   - parameters are initialised from the same Generator on every rank;
//   - dropout masks are keyed by global element ids (keyed_dropout);
//   - GCN's normalisation uses global degrees (the halo's degrees come from their owners);
//   - gradients are summed over ranks in rank order, identically on every rank.
// Losses agree with the single-process run to float rounding (about 1e-6 relative).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "edgewise/gnn/dist/communicator.hpp"
#include "edgewise/gnn/dist/halo_exchange.hpp"
#include "edgewise/gnn/dist/partition.hpp"
#include "edgewise/gnn/train/minibatch_trainer.hpp"
#include "edgewise/gnn/nn/models.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::gnn::dist {

// One rank's part made ready for training on a device (the CPU, or this rank's GPU).
struct DistTrainData {
  Part part;
  TrainData local;     // the part's graph (raw, local ids), features, labels, owned splits
  Graph gcn_graph;     // A + I normalised with global degrees (built for GCN)
  int64_t global_train = 0, global_valid = 0, global_test = 0;
};

// The part as training data: prepare() on the part's dataset (row-wise feature
// normalisation equals the global one); `features` must name the format the
// single-process run uses (Auto decides on the part's density).
DistTrainData prepare_part(const Communicator& comm, Part part, const PrepareOptions& options = {},
                           Device device = Device::cpu());

// A GCN / GraphSAGE / GIN stack over a part; parameter names, order and
// initialisation equal make_model()'s for the same config and Generator.
class DistNodeClassifier : public Module {
 public:
  // Class scores [n_own, out_features] of the owned nodes.
  virtual Variable forward(Generator& generator) = 0;
  virtual std::vector<ParamGroup> param_groups(float weight_decay) const = 0;
};

std::unique_ptr<DistNodeClassifier> make_dist_model(const ModelConfig& config, Generator& generator,
                                                    const DistTrainData& data, const HaloExchange& halo);

struct DistTrainResult {
  TrainResult result;              // the history and selection, equal on every rank
  double halo_bytes_per_epoch = 0; // sent by all ranks together in one training step
};

// Trainer::fit over the ranks (epochs, optimizer, weight decay, patience, selection,
// progress lines on rank 0, metrics files written by rank 0; no checkpoints).
DistTrainResult fit_distributed(const Communicator& comm, DistNodeClassifier& model, const DistTrainData& data,
                                const TrainerOptions& options);

// Minibatch data parallelism (MiniBatchTrainerOptions::data_parallel) over `comm`:
// this rank's slice of every batch, gradients and losses summed in rank order
// (bitwise the same on every rank, so the replicas stay identical). `comm` must
// outlive the trainer.
DataParallel data_parallel(const Communicator& comm);

}  // namespace edgewise::gnn::dist
