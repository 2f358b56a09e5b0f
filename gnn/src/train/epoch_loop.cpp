// The one epoch loop (epoch_loop.hpp): schedule, train, evaluate, select, report,
// checkpoint, stop; resume first, metric files last.
#include "edgewise/gnn/train/epoch_loop.hpp"

#include <cmath>
#include <cstdio>

#include "edgewise/kernels/common/check.hpp"
#include "train/checkpoint.hpp"

namespace edgewise::gnn {

namespace train_detail {

std::string format_seconds(double s) {
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  }
  return buf;
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

namespace {

// "loss 0.1234  train 0.912  valid 0.801  valid_loss 0.6543  test 0.812": accuracies
// by their split's name, other metrics by theirs.
std::string metrics_text(const EpochRecord& rec) {
  std::string out;
  char buf[96];
  std::snprintf(buf, sizeof buf, "loss %.4f", rec.loss);
  out += buf;
  for (const auto& [name, value] : rec.metrics.items()) {
    const bool accuracy = name.size() > 4 && name.compare(name.size() - 4, 4, "_acc") == 0;
    const bool loss = name.find("loss") != std::string::npos;
    std::snprintf(buf, sizeof buf, loss ? "  %s %.4f" : "  %s %.3f",
                  (accuracy ? name.substr(0, name.size() - 4) : name).c_str(), value);
    out += buf;
  }
  return out;
}

}  // namespace
}  // namespace train_detail

void check_train_options(const char* task, const TrainOptions& options) {
  EW_REQUIRE(options.epochs >= 1, task, ": epochs (", options.epochs, ") must be >= 1");
  EW_REQUIRE(options.eval_every >= 1, task, ": eval_every (", options.eval_every, ") must be >= 1");
  EW_REQUIRE(options.patience >= 0, task, ": patience (", options.patience, ") must be >= 0");
  EW_REQUIRE(std::isfinite(options.lr) && options.lr >= 0, task, ": lr (", options.lr, ") must be finite and >= 0");
  train_detail::check_checkpoint_options(task, options.checkpoint_every, options.checkpoint_path);
  for (const std::string* path : {&options.metrics_csv, &options.metrics_json, &options.plot_svg})
    if (!path->empty()) check_writable_file(*path);
}

std::unique_ptr<Optimizer> make_optimizer(const std::vector<ParamGroup>& groups, const TrainOptions& options) {
  AdamOptions adam;
  adam.lr = options.lr;
  switch (options.optimizer) {
    case OptimizerKind::Adam: return std::make_unique<Adam>(groups, adam);
    case OptimizerKind::AdamW: return make_adamw(groups, adam);
    case OptimizerKind::Sgd: {
      SgdOptions sgd;
      sgd.lr = options.lr;
      sgd.momentum = options.momentum;
      return std::make_unique<Sgd>(groups, sgd);
    }
  }
  return nullptr;
}

void run_training(const TrainOptions& options, const EpochLoop& loop, const TrainingState& state,
                  TrainResult& result) {
  using namespace train_detail;
  EpochSelector selector(options.selection, loop.selection);
  const RunState run{state, selector, result, options.run_tags};
  const Clock::time_point start = Clock::now();
  int64_t first_epoch = 1;
  double resumed_seconds = 0;  // training time before the resumed checkpoint
  if (!options.resume_path.empty())
    first_epoch = resume_from_checkpoint(options.resume_path, options.epochs, run, resumed_seconds);
  auto elapsed = [&] { return resumed_seconds + seconds_between(start, Clock::now()); };
  bool finished = false;  // early stopping ended the run (an on_epoch stop is an interrupt)
  auto checkpoint = [&](int64_t epoch) {
    save_checkpoint(options.checkpoint_path, epoch, run, elapsed(), finished);
  };
  int64_t since_best = selector.state().since_best;
  for (int64_t epoch = first_epoch; epoch <= options.epochs; ++epoch) {
    EpochRecord rec;
    rec.epoch = epoch;
    rec.lr = scheduled_lr(options.lr_schedule, options.lr, epoch, options.epochs);
    state.optimizer.set_lr(static_cast<float>(rec.lr));
    loop.train_step(rec);
    rec.evaluated = epoch % options.eval_every == 0 || epoch == options.epochs;
    if (rec.evaluated) {
      loop.evaluate(rec);
      since_best = selector.observe(rec, result);
    }
    result.history.push_back(rec);
    if (loop.report && options.log_every > 0 &&
        (epoch % options.log_every == 0 || epoch == 1 || epoch == options.epochs)) {
      const double eta = seconds_between(start, Clock::now()) / static_cast<double>(epoch - first_epoch + 1) *
                         static_cast<double>(options.epochs - epoch);
      const std::string tail = loop.progress_tail ? loop.progress_tail(rec) + "  " : std::string();
      std::printf("epoch %4lld/%lld  %s  %.2f ms/epoch  %sETA %s\n", static_cast<long long>(epoch),
                  static_cast<long long>(options.epochs), metrics_text(rec).c_str(), rec.epoch_ms, tail.c_str(),
                  format_seconds(eta).c_str());
      std::fflush(stdout);
    }
    if (options.checkpoint_every > 0 && epoch % options.checkpoint_every == 0 && epoch < options.epochs &&
        !options.checkpoint_path.empty()) {
      checkpoint(epoch);
    }
    if (options.on_epoch && !options.on_epoch(rec)) {
      result.stopped_early = true;
      break;
    }
    if (rec.evaluated && options.patience > 0 && since_best >= options.patience) {
      result.stopped_early = finished = true;
      break;
    }
  }
  if (!options.checkpoint_path.empty() && !result.history.empty()) checkpoint(result.history.back().epoch);
  selector.finish(result);
  result.total_seconds = elapsed();
  if (!loop.report) return;
  if (!options.metrics_csv.empty()) write_metrics_csv(options.metrics_csv, result.history);
  if (!options.metrics_json.empty()) write_metrics_json(options.metrics_json, result);
  if (!options.plot_svg.empty()) write_training_curves_svg(options.plot_svg, result.history, loop.name);
}

}  // namespace edgewise::gnn
