// k-fold training of the GIN graph classifier over shuffled minibatches of graphs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/train/graph_classification.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

using train_detail::Clock;

double seconds_since(Clock::time_point start) { return train_detail::seconds_between(start, Clock::now()); }

IndexTensor all_rows(int64_t n, Device device) {
  std::vector<int64_t> rows(static_cast<size_t>(n));
  std::iota(rows.begin(), rows.end(), int64_t{0});
  return IndexTensor::from_host(rows, n, 1, device);
}

// Correct predictions of logits [B, C] against labels [B, 1].
int64_t count_correct(const Tensor& logits, const IndexTensor& labels) {
  const std::vector<float> z = logits.to_host_vector();
  const std::vector<int64_t> y = labels.to_host_vector();
  const int64_t c = logits.cols();
  int64_t correct = 0;
  for (int64_t b = 0; b < logits.rows(); ++b) {
    const float* row = z.data() + b * c;
    correct += (std::max_element(row, row + c) - row) == y[static_cast<size_t>(b)];
  }
  return correct;
}

std::span<const int64_t> slice(const std::vector<int64_t>& ids, size_t begin, int64_t size) {
  const size_t end = std::min(ids.size(), begin + static_cast<size_t>(size));
  return {ids.data() + begin, end - begin};
}

}  // namespace

FoldSplit fold_split(const std::vector<int64_t>& folds, int64_t num_folds, int64_t fold) {
  EW_REQUIRE(num_folds >= 3, "fold_split: num_folds (", num_folds, ") must be >= 3 (test, valid and train folds)");
  EW_REQUIRE(fold >= 0 && fold < num_folds, "fold_split: fold ", fold, " is outside [0, ", num_folds, ")");
  const int64_t valid_fold = (fold + 1) % num_folds;
  FoldSplit s;
  for (size_t g = 0; g < folds.size(); ++g) {
    EW_REQUIRE(folds[g] >= 0 && folds[g] < num_folds, "fold_split: graph ", g, " has fold ", folds[g],
               ", outside [0, ", num_folds, ")");
    const auto id = static_cast<int64_t>(g);
    if (folds[g] == fold) s.test.push_back(id);
    else if (folds[g] == valid_fold) s.valid.push_back(id);
    else s.train.push_back(id);
  }
  EW_REQUIRE(!s.train.empty() && !s.valid.empty() && !s.test.empty(), "fold_split: fold ", fold, " leaves ",
             s.train.size(), " train, ", s.valid.size(), " valid and ", s.test.size(), " test graphs; none may be 0");
  return s;
}

double evaluate_graphs(GinGraphClassifier& model, const GraphDataset& data, const std::vector<int64_t>& graph_ids,
                       int64_t batch_size, Device device) {
  EW_REQUIRE(batch_size >= 1, "evaluate_graphs: batch_size (", batch_size, ") must be >= 1");
  if (graph_ids.empty()) return 0.0;
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.eval();
  Generator unused(0);
  int64_t correct = 0;
  for (size_t at = 0; at < graph_ids.size(); at += static_cast<size_t>(batch_size)) {
    const GraphBatch batch = make_graph_batch(data, slice(graph_ids, at, batch_size), device);
    correct += count_correct(model.forward(batch, unused).value(), batch.labels);
  }
  model.train(was_training);
  return static_cast<double>(correct) / static_cast<double>(graph_ids.size());
}

FoldResult train_graph_fold(const GraphDataset& data, const FoldSplit& split, const GinGraphConfig& config,
                            const GraphTrainOptions& options, Device device, int64_t fold) {
  EW_REQUIRE(options.batch_size >= 1 && options.eval_batch_size >= 1, "train_graph_fold: batch_size (",
             options.batch_size, ") and eval_batch_size (", options.eval_batch_size, ") must be >= 1");
  EW_REQUIRE(!split.train.empty(), "train_graph_fold: no training graphs");
  check_train_options("train_graph_fold", options);
  const Clock::time_point fold_start = Clock::now();
  Generator generator(options.seed);
  GinGraphClassifier model(config, generator, device);
  auto optimizer = make_optimizer({ParamGroup{model.parameters(), options.weight_decay}}, options);
  train_detail::LossGuard loss_guard("train_graph_fold", options.nonfinite_loss);
  double train_acc = 0;  // the running accuracy of the last epoch's batches
  EpochLoop loop;
  loop.name = data.name + " fold " + std::to_string(fold);
  loop.selection = {"valid_acc", true, "", false};
  loop.train_step = [&](EpochRecord& rec) {
    const Clock::time_point start = Clock::now();
    model.train();
    // A fresh order per epoch, a pure function of (seed, epoch): a resumed run continues it.
    std::vector<int64_t> order = split.train;
    CounterRng order_rng(options.seed, kSaltBatchOrder, static_cast<uint64_t>(rec.epoch));
    shuffle(order, order_rng);
    double loss_sum = 0;
    int64_t correct = 0;
    int64_t batch_index = 0;
    for (size_t at = 0; at < order.size(); at += static_cast<size_t>(options.batch_size), ++batch_index) {
      const GraphBatch batch = make_graph_batch(data, slice(order, at, options.batch_size), device);
      optimizer->zero_grad();
      Variable logits = model.forward(batch, generator);
      Variable loss = cross_entropy(logits, batch.labels, all_rows(batch.num_graphs(), device));
      const double batch_loss = loss.value().to_host_vector()[0];
      loss_guard.check(batch_loss, rec.epoch, batch_index);
      correct += count_correct(logits.value(), batch.labels);
      loss_sum += batch_loss * static_cast<double>(batch.num_graphs());
      loss.backward();
      optimizer->step();
    }
    rec.epoch_ms = 1e3 * seconds_since(start);
    rec.loss = loss_sum / static_cast<double>(order.size());
    train_acc = static_cast<double>(correct) / static_cast<double>(order.size());
  };
  loop.evaluate = [&](EpochRecord& rec) {
    rec.metrics.set("train_acc", train_acc);
    rec.metrics.set("valid_acc", evaluate_graphs(model, data, split.valid, options.eval_batch_size, device));
    rec.metrics.set("test_acc", evaluate_graphs(model, data, split.test, options.eval_batch_size, device));
  };
  loop.progress_tail = [&](const EpochRecord& rec) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.0f graphs/s", static_cast<double>(split.train.size()) / (rec.epoch_ms / 1e3));
    return std::string(buf);
  };
  FoldResult result;
  result.fold = fold;
  run_training(options, loop, TrainingState{model, *optimizer, generator}, result);
  result.graphs_per_second =
      result.epoch_ms_median > 0 ? static_cast<double>(split.train.size()) / (result.epoch_ms_median / 1e3) : 0.0;
  result.seconds = seconds_since(fold_start);
  return result;
}

}  // namespace edgewise::gnn
