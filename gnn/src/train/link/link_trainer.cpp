// train_link_predictor: GCN encoder + dot-product decoder, BCE over the training links
// and fresh negatives each epoch, model selection by validation AUC (PyG link_pred.py).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/train/link_prediction.hpp"
#include "edgewise/gnn/nn/optim.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "nn/gcn_link_encoder.hpp"
#include "edgewise/kernels/common/counter_rng.hpp"

namespace edgewise::gnn {

namespace {

// Positive pairs then negative pairs, as index tensors and 1/0 targets on `device`.
struct LabelledPairs {
  IndexTensor src, dst;
  Tensor targets;  // [P + Q, 1]
  IndexTensor rows;  // 0 .. P + Q - 1
  int64_t num_positive = 0;
};

LabelledPairs label(const NodePairs& positive, const NodePairs& negative, Device device) {
  LabelledPairs out;
  std::vector<int64_t> src = positive.src, dst = positive.dst;
  src.insert(src.end(), negative.src.begin(), negative.src.end());
  dst.insert(dst.end(), negative.dst.begin(), negative.dst.end());
  std::vector<float> targets(src.size(), 0.0f);
  std::fill(targets.begin(), targets.begin() + positive.size(), 1.0f);
  std::vector<int64_t> rows(src.size());
  std::iota(rows.begin(), rows.end(), int64_t{0});
  out.src = IndexTensor::vector(src, device);
  out.dst = IndexTensor::vector(dst, device);
  out.targets = Tensor::vector(targets, device);
  out.rows = IndexTensor::vector(rows, device);
  out.num_positive = positive.size();
  return out;
}

struct Scores {
  double auc = 0, hits = 0;
};

Scores score(const Variable& z, const LabelledPairs& pairs, int64_t hits_k) {
  const std::vector<float> s = pair_dot(z, pairs.src, pairs.dst).value().to_host_vector();
  const auto split = s.begin() + pairs.num_positive;
  const std::span<const float> pos(s.data(), static_cast<size_t>(pairs.num_positive));
  const std::span<const float> neg(&*split, static_cast<size_t>(s.end() - split));
  return {roc_auc(pos, neg), hits_at_k(pos, neg, hits_k)};
}

}  // namespace

LinkTrainResult train_link_predictor(const LinkSplit& split, const NodeFeatures& features,
                                     const LinkTrainOptions& options, Device device) {
  constexpr const char* kOp = "train_link_predictor";
  EW_REQUIRE(options.hits_k >= 1, kOp, ": hits_k (", options.hits_k, ") must be >= 1");
  EW_REQUIRE(split.train_pos.size() > 0, kOp, ": the split has no training links");
  EW_REQUIRE(split.valid_pos.size() > 0 && split.valid_neg.size() > 0, kOp,
             ": the split has no validation links (model selection needs them)");
  EW_REQUIRE(split.test_pos.size() > 0 && split.test_neg.size() > 0, kOp, ": the split has no test links");
  EW_REQUIRE(features.rows() == split.num_nodes, kOp, ": features have ", features.rows(), " rows for ",
             split.num_nodes, " nodes");
  EW_REQUIRE(features.device() == device, kOp, ": features are on ", features.device().str(), ", not on ",
             device.str());
  check_train_options(kOp, options);

  Generator generator(options.seed);
  link_detail::GcnLinkEncoder encoder(features.cols(), options.hidden_features, options.out_features,
                                      options.layers, options.dropout, generator, device);
  auto optimizer = make_optimizer({ParamGroup{encoder.parameters(), options.weight_decay}}, options);
  train_detail::LossGuard loss_guard(kOp, options.nonfinite_loss);

  // Normalised once (A + I, D^-1/2 . D^-1/2): the encoder's layers do not normalise.
  const Graph train_graph = split.train_graph.to(device).gcn_normalized();
  const Graph test_graph = split.test_graph.to(device).gcn_normalized();
  const LabelledPairs valid = label(split.valid_pos, split.valid_neg, device);
  const LabelledPairs test = label(split.test_pos, split.test_neg, device);

  EpochLoop loop;
  loop.name = "link prediction";
  loop.selection = {"valid_auc", true, "", false};
  loop.train_step = [&](EpochRecord& rec) {
    const auto t0 = train_detail::Clock::now();
    // As many fresh negatives as training links, against the training graph.
    const NodePairs negatives =
        sample_negative_edges(split.train_graph, split.train_pos.size(),
                              stream_key(options.seed, kSaltTrainNegatives, static_cast<uint64_t>(rec.epoch)));
    const LabelledPairs batch = label(split.train_pos, negatives, device);
    encoder.train();
    optimizer->zero_grad();
    Variable z = encoder.forward(train_graph, features, generator);
    Variable loss = bce_with_logits(pair_dot(z, batch.src, batch.dst), batch.targets, batch.rows);
    rec.loss = loss.value().to_host_vector()[0];
    loss_guard.check(rec.loss, rec.epoch);
    loss.backward();
    optimizer->step();
    synchronize(device);
    rec.epoch_ms = train_detail::seconds_between(t0, train_detail::Clock::now()) * 1e3;
  };
  loop.evaluate = [&](EpochRecord& rec) {
    NoGradGuard no_grad;
    encoder.eval();
    const Scores v = score(encoder.forward(train_graph, features, generator), valid, options.hits_k);
    const Scores t = score(encoder.forward(test_graph, features, generator), test, options.hits_k);
    encoder.train();
    rec.metrics.set("valid_auc", v.auc);
    rec.metrics.set("test_auc", t.auc);
    rec.metrics.set("valid_hits_at_k", v.hits);
    rec.metrics.set("test_hits_at_k", t.hits);
  };
  LinkTrainResult result;
  result.model_description = encoder.describe() + " + dot-product decoder";
  result.num_parameters = encoder.num_parameters();
  run_training(options, loop, TrainingState{encoder, *optimizer, generator}, result);
  result.best_valid_auc = result.best.get("valid_auc");
  result.test_auc = result.best.get("test_auc");
  result.valid_hits_at_k = result.best.get("valid_hits_at_k");
  result.test_hits_at_k = result.best.get("test_hits_at_k");
  return result;
}

}  // namespace edgewise::gnn
