// Full-batch node classification: the node task's train step and evaluation on the one loop.
#include "edgewise/gnn/train/trainer.hpp"

#include <cstdio>
#include <string>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "train/checkpoint.hpp"
#include "train/node_evaluation.hpp"

namespace edgewise::gnn {

namespace train_detail {

void score_epoch(const Tensor& scores, const TrainData& data, EpochRecord& rec) {
  rec.metrics.set("train_acc", ops::accuracy(scores, data.labels, data.train_idx));
  rec.metrics.set("valid_acc", data.valid_idx.numel() ? ops::accuracy(scores, data.labels, data.valid_idx) : 0.0);
  if (data.valid_idx.numel()) {
    Tensor logp(scores.rows(), scores.cols(), scores.device());
    ops::log_softmax_rows(scores, logp);
    rec.metrics.set("valid_loss", ops::nll_loss(logp, data.labels, data.valid_idx, nullptr));
  }
  rec.metrics.set("test_acc", data.test_idx.numel() ? ops::accuracy(scores, data.labels, data.test_idx) : 0.0);
}

}  // namespace train_detail

Trainer::Trainer(NodeClassifier& model, const TrainData& data, TrainerOptions options)
    : model_(model), data_(data), options_(std::move(options)), generator_(options_.seed) {
  EW_REQUIRE(options_.epochs >= 1, "Trainer: epochs (", options_.epochs, ") must be >= 1");
  EW_REQUIRE(data.train_idx.numel() > 0, "Trainer: the training split (train_idx) of '", data.name, "' is empty");
  EW_REQUIRE(data.valid_idx.numel() > 0 || (options_.selection == ModelSelection::LastEpoch && options_.patience == 0),
             "Trainer: the validation split (valid_idx) of '", data.name,
             "' is empty: best-valid selection and early stopping need it (use ModelSelection::LastEpoch, patience 0)");
  train_detail::check_checkpoint_options("Trainer", options_.checkpoint_every, options_.checkpoint_path);
}

double Trainer::evaluate(const IndexTensor& rows) {
  return ops::accuracy(train_detail::eval_scores(model_, data_, generator_), data_.labels, rows);
}

TrainResult Trainer::fit() {
  check_train_options("Trainer", options_);  // before any work, so a bad path costs nothing
  auto optimizer = make_optimizer(model_.param_groups(options_.weight_decay), options_);
  train_detail::LossGuard loss_guard("Trainer", options_.nonfinite_loss);
  EpochLoop loop;
  loop.name = data_.name;
  loop.selection = train_detail::node_selection();
  loop.train_step = [&](EpochRecord& rec) {
    // Forward, loss, backward, update.
    const auto t0 = train_detail::Clock::now();
    model_.train();
    optimizer->zero_grad();
    Variable logits = model_.forward(data_.graph, data_.features, generator_);
    Variable loss = cross_entropy(logits, data_.labels, data_.train_idx);
    rec.loss = loss.value().to_host_vector()[0];
    loss_guard.check(rec.loss, rec.epoch);
    loss.backward();
    optimizer->step();
    synchronize(data_.labels.device(), engine_stream(data_.labels.device()));
    rec.epoch_ms = train_detail::seconds_between(t0, train_detail::Clock::now()) * 1e3;
  };
  loop.evaluate = [&](EpochRecord& rec) {  // not timed as part of the epoch
    train_detail::score_epoch(train_detail::eval_scores(model_, data_, generator_), data_, rec);
  };
  loop.progress_tail = [&](const EpochRecord& rec) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g edges/s", static_cast<double>(data_.graph.num_edges()) / (rec.epoch_ms / 1e3));
    return std::string(buf);
  };
  TrainResult result;
  run_training(options_, loop, TrainingState{model_, *optimizer, generator_}, result);
  return result;
}

}  // namespace edgewise::gnn
