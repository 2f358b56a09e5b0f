// The epoch loop Trainer::fit and dist::fit_distributed share (epoch_loop.hpp).
#include "edgewise/gnn/train/epoch_loop.hpp"

#include <cstdio>

namespace edgewise::gnn::train_detail {

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

std::unique_ptr<Optimizer> make_optimizer(const std::vector<ParamGroup>& groups, const TrainerOptions& options) {
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

void check_output_paths(const TrainerOptions& options) {
  for (const std::string* path : {&options.metrics_csv, &options.metrics_json, &options.plot_svg})
    if (!path->empty()) check_writable_file(*path);
}

void run_epochs(const TrainerOptions& options, const EpochLoop& loop, EpochSelector& selector, TrainResult& result) {
  auto elapsed = [&] { return loop.resumed_seconds + seconds_between(loop.start, Clock::now()); };
  for (int64_t epoch = loop.first_epoch; epoch <= options.epochs; ++epoch) {
    EpochRecord rec;
    rec.epoch = epoch;
    loop.train_step(rec);
    loop.evaluate(rec);
    result.history.push_back(rec);
    const int64_t since_best = selector.observe(rec, result);
    if (loop.report && options.log_every > 0 &&
        (epoch % options.log_every == 0 || epoch == 1 || epoch == options.epochs)) {
      const double eta = seconds_between(loop.start, Clock::now()) / static_cast<double>(epoch - loop.first_epoch + 1) *
                         static_cast<double>(options.epochs - epoch);
      std::printf("epoch %4lld/%lld  loss %.4f  train %.3f  valid %.3f  test %.3f  %.2f ms/epoch  %s\n",
                  static_cast<long long>(epoch), static_cast<long long>(options.epochs), rec.loss, rec.train_acc,
                  rec.valid_acc, rec.test_acc, rec.epoch_ms, loop.progress_tail(rec, eta).c_str());
      std::fflush(stdout);
    }
    if (loop.checkpoint && options.checkpoint_every > 0 && epoch % options.checkpoint_every == 0 &&
        epoch < options.epochs) {
      loop.checkpoint(epoch, elapsed());
    }
    if (options.on_epoch && !options.on_epoch(rec)) {
      result.stopped_early = true;
      break;
    }
    if (options.patience > 0 && since_best >= options.patience) {
      result.stopped_early = true;
      break;
    }
  }
  if (loop.checkpoint && !options.checkpoint_path.empty() && !result.history.empty()) {
    loop.checkpoint(result.history.back().epoch, elapsed());
  }
  selector.finish(result);
  result.total_seconds = elapsed();
  if (!loop.report) return;
  if (!options.metrics_csv.empty()) write_metrics_csv(options.metrics_csv, result.history);
  if (!options.metrics_json.empty()) write_metrics_json(options.metrics_json, result);
  if (!options.plot_svg.empty()) write_training_curves_svg(options.plot_svg, result.history, loop.dataset_name);
}

}  // namespace edgewise::gnn::train_detail
