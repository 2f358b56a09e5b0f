// The training loop: step, evaluate, select by validation accuracy, report progress.
#include "edgewise/gnn/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "edgewise/gnn/functional.hpp"
#include "edgewise/gnn/ops.hpp"
#include "edgewise/gnn/stream.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "train/checkpoint.hpp"
#include "train/epoch_selection.hpp"
#include "train/loss_guard.hpp"

namespace edgewise::gnn {

namespace {
using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::unique_ptr<Optimizer> make_optimizer(const NodeClassifier& model, const TrainerOptions& o) {
  auto groups = model.param_groups(o.weight_decay);
  AdamOptions adam;
  adam.lr = o.lr;
  switch (o.optimizer) {
    case OptimizerKind::Adam: return std::make_unique<Adam>(groups, adam);
    case OptimizerKind::AdamW: return make_adamw(groups, adam);
    case OptimizerKind::Sgd: {
      SgdOptions sgd;
      sgd.lr = o.lr;
      sgd.momentum = o.momentum;
      return std::make_unique<Sgd>(groups, sgd);
    }
  }
  return nullptr;
}

std::string format_seconds(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  }
  return buf;
}
}  // namespace

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
  EW_REQUIRE(options_.checkpoint_every >= 0, "Trainer: checkpoint_every (", options_.checkpoint_every,
             ") must be >= 0");
  EW_REQUIRE(options_.checkpoint_every == 0 || !options_.checkpoint_path.empty(), "Trainer: checkpoint_every (",
             options_.checkpoint_every, ") needs a checkpoint_path");
  if (!options_.checkpoint_path.empty()) train_detail::check_checkpoint_path(options_.checkpoint_path);
}

double Trainer::evaluate(const IndexTensor& rows) {
  NoGradGuard guard;
  model_.eval();
  Variable logits = model_.forward(data_.graph, data_.features, generator_);
  model_.train();
  return ops::accuracy(logits.value(), data_.labels, rows);
}

TrainResult Trainer::fit() {
  // Before any work, so a bad path costs nothing.
  for (const std::string* path : {&options_.metrics_csv, &options_.metrics_json, &options_.plot_svg})
    if (!path->empty()) check_writable_file(*path);
  auto optimizer = make_optimizer(model_, options_);
  train_detail::LossGuard loss_guard("Trainer", options_.nonfinite_loss);
  TrainResult result;
  const auto start = Clock::now();
  train_detail::EpochSelector selector(options_.selection);
  const train_detail::RunState run{model_, *optimizer, generator_, selector, result};
  int64_t first_epoch = 1;
  double resumed_seconds = 0;  // training time before the checkpoint
  if (!options_.resume_path.empty()) {
    first_epoch = train_detail::resume_from_checkpoint(options_.resume_path, options_.epochs, run, resumed_seconds);
  }
  auto checkpoint = [&](int64_t epoch) {
    train_detail::save_checkpoint(options_.checkpoint_path, epoch, run,
                                  resumed_seconds + ms_between(start, Clock::now()) / 1e3);
  };
  for (int64_t epoch = first_epoch; epoch <= options_.epochs; ++epoch) {
    EpochRecord rec;
    rec.epoch = epoch;
    // One training step: forward, loss, backward, update.
    const auto t0 = Clock::now();
    model_.train();
    optimizer->zero_grad();
    Variable logits = model_.forward(data_.graph, data_.features, generator_);
    Variable loss = cross_entropy(logits, data_.labels, data_.train_idx);
    rec.loss = loss.value().to_host_vector()[0];
    loss_guard.check(rec.loss, epoch);
    loss.backward();
    optimizer->step();
    synchronize(data_.labels.device(), engine_stream(data_.labels.device()));
    rec.epoch_ms = ms_between(t0, Clock::now());
    // Evaluation (not timed as part of the epoch).
    {
      NoGradGuard guard;
      model_.eval();
      Variable eval_logits = model_.forward(data_.graph, data_.features, generator_);
      model_.train();
      train_detail::score_epoch(eval_logits.value(), data_, rec);
    }
    result.history.push_back(rec);
    const int64_t since_best = selector.observe(rec, result);
    if (options_.log_every > 0 && (epoch % options_.log_every == 0 || epoch == 1 || epoch == options_.epochs)) {
      const double elapsed = ms_between(start, Clock::now()) / 1e3;
      const double eta =
          elapsed / static_cast<double>(epoch - first_epoch + 1) * static_cast<double>(options_.epochs - epoch);
      const double edges_per_s = static_cast<double>(data_.graph.num_edges()) / (rec.epoch_ms / 1e3);
      std::printf("epoch %4lld/%lld  loss %.4f  train %.3f  valid %.3f  test %.3f  %.2f ms/epoch  %.3g edges/s  ETA %s\n",
                  static_cast<long long>(epoch), static_cast<long long>(options_.epochs), rec.loss, rec.train_acc,
                  rec.valid_acc, rec.test_acc, rec.epoch_ms, edges_per_s, format_seconds(eta).c_str());
      std::fflush(stdout);
    }
    if (options_.checkpoint_every > 0 && epoch % options_.checkpoint_every == 0 && epoch < options_.epochs) {
      checkpoint(epoch);
    }
    if (options_.on_epoch && !options_.on_epoch(rec)) {
      result.stopped_early = true;
      break;
    }
    if (options_.patience > 0 && since_best >= options_.patience) {
      result.stopped_early = true;
      break;
    }
  }
  if (!options_.checkpoint_path.empty() && !result.history.empty()) checkpoint(result.history.back().epoch);
  selector.finish(result);
  result.total_seconds = resumed_seconds + ms_between(start, Clock::now()) / 1e3;
  if (!options_.metrics_csv.empty()) write_metrics_csv(options_.metrics_csv, result.history);
  if (!options_.metrics_json.empty()) write_metrics_json(options_.metrics_json, result);
  if (!options_.plot_svg.empty()) write_training_curves_svg(options_.plot_svg, result.history, data_.name);
  return result;
}

}  // namespace edgewise::gnn
