// The evaluation of the node tasks (Trainer, MiniBatchTrainer): full-batch scores and
// the metrics the loop records and selects by.
#pragma once

#include "edgewise/gnn/autograd/autograd.hpp"
#include "edgewise/gnn/tensor/random.hpp"
#include "edgewise/gnn/train/epoch_selection.hpp"
#include "edgewise/gnn/train/trainer.hpp"

namespace edgewise::gnn::train_detail {

// Node classification selects by validation accuracy, ties to the lower validation loss.
inline SelectionKey node_selection() { return {"valid_acc", true, "valid_loss", false}; }

// Full-batch scores [N, K] -> rec's "train_acc", "valid_acc", "valid_loss" (when
// there are validation nodes) and "test_acc".
void score_epoch(const Tensor& scores, const TrainData& data, EpochRecord& rec);

// The model's full-batch scores [N, K] in eval mode, nothing recorded for backward;
// the model is left in training mode.
template <class Model>
Tensor eval_scores(Model& model, const TrainData& data, Generator& generator) {
  NoGradGuard guard;
  model.eval();
  Tensor scores = model.forward(data.graph, data.features, generator).value();
  model.train();
  return scores;
}

}  // namespace edgewise::gnn::train_detail
