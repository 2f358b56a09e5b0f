// The training loop: step, evaluate, select by validation accuracy, report progress.
#include "edgewise/gnn/train/trainer.hpp"

#include <cstdio>
#include <string>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/gnn/tensor/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "train/checkpoint.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/epoch_selection.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"

namespace edgewise::gnn {

OptimizerKind parse_optimizer(const std::string& name) {
  if (name == "adam") return OptimizerKind::Adam;
  if (name == "adamw") return OptimizerKind::AdamW;
  if (name == "sgd") return OptimizerKind::Sgd;
  detail::throw_invalid_argument("optimizer: unknown '", name, "' (expected adam, adamw or sgd)");
}

ModelSelection parse_model_selection(const std::string& name) {
  if (name == "best-valid") return ModelSelection::BestValidation;
  if (name == "last") return ModelSelection::LastEpoch;
  detail::throw_invalid_argument("select: unknown '", name, "' (expected best-valid or last)");
}

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
  train_detail::check_output_paths(options_);  // before any work, so a bad path costs nothing
  auto optimizer = train_detail::make_optimizer(model_.param_groups(options_.weight_decay), options_);
  train_detail::LossGuard loss_guard("Trainer", options_.nonfinite_loss);
  TrainResult result;
  train_detail::EpochLoop loop;
  loop.dataset_name = data_.name;
  train_detail::EpochSelector selector(options_.selection);
  const train_detail::RunState run{model_, *optimizer, generator_, selector, result, nullptr, &options_.run_tags};
  if (!options_.resume_path.empty()) {
    loop.first_epoch =
        train_detail::resume_from_checkpoint(options_.resume_path, options_.epochs, run, loop.resumed_seconds);
  }
  loop.checkpoint = [&](int64_t epoch, double elapsed_seconds) {
    train_detail::save_checkpoint(options_.checkpoint_path, epoch, run, elapsed_seconds);
  };
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
  loop.progress_tail = [&](const EpochRecord& rec, double eta_seconds) {
    const double edges_per_s = static_cast<double>(data_.graph.num_edges()) / (rec.epoch_ms / 1e3);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3g edges/s  ETA %s", edges_per_s,
                  train_detail::format_seconds(eta_seconds).c_str());
    return std::string(buf);
  };
  train_detail::run_epochs(options_, loop, selector, result);
  return result;
}

}  // namespace edgewise::gnn
