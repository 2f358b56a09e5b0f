// The distributed full-batch loop: Trainer::fit with gradients, losses and
// accuracy counts reduced over the ranks.
#include "edgewise/gnn/dist/trainer.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "edgewise/gnn/autograd/functional.hpp"
#include "edgewise/gnn/tensor/ops.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/gnn/train/epoch_loop.hpp"
#include "edgewise/gnn/train/loss_guard.hpp"

namespace edgewise::gnn::dist {

namespace {

// A + I with every edge weighted 1 / sqrt(deg(src) deg(dst)), deg the global
// weighted in-degree: Graph::gcn_normalized's arithmetic, with the halo's degrees
// (which the part does not see whole) sent by their owners.
Graph gcn_graph_with_global_degrees(const Graph& local, const HaloExchange& halo) {
  const Graph looped = local.to(Device::cpu()).with_self_loops(1.0f);
  Tensor degree = looped.in_degree(/*weighted=*/true);
  const Tensor owned_degree = Tensor::from_host(
      std::span<const float>(degree.data(), static_cast<size_t>(halo.num_owned())), halo.num_owned(), 1);
  const std::vector<float> deg = halo.forward(owned_degree).to_host_vector();
  const std::vector<int32_t> src = looped.sources().to_host_vector();
  const std::vector<int32_t> dst = looped.destinations().to_host_vector();
  std::vector<float> w = looped.has_edge_weight() ? looped.edge_weight().to_host_vector()
                                                  : std::vector<float>(src.size(), 1.0f);
  auto inv_sqrt = [](float d) { return d > 0 ? 1.0f / std::sqrt(d) : 0.0f; };
  for (size_t k = 0; k < src.size(); ++k) w[k] = inv_sqrt(deg[static_cast<size_t>(src[k])]) * w[k] * inv_sqrt(deg[static_cast<size_t>(dst[k])]);
  return looped.with_edge_weight(Tensor::from_host(w, static_cast<int64_t>(w.size()), 1)).to(local.device());
}

// Every parameter's gradient summed over the ranks (a missing one counts as 0).
void allreduce_gradients(const Communicator& comm, const std::vector<Variable>& params, Device device) {
  if (device.is_cuda()) {
    // Packed on the device, reduced there (NCCL / CUDA-aware MPI / staging), unpacked.
    int64_t total = 0;
    for (const Variable& p : params) total += p.value().numel();
    Tensor flat = Tensor::zeros(total, 1, device);
    int64_t at = 0;
    for (const Variable& p : params) {
      if (p.has_grad()) copy_bytes(flat.data() + at, device, p.grad().data(), device, p.grad().bytes());
      at += p.value().numel();
    }
    comm.allreduce_sum(flat.data(), total, device);
    at = 0;
    for (Variable p : params) {
      Tensor g(p.rows(), p.cols(), device);
      copy_bytes(g.data(), device, flat.data() + at, device, g.bytes());
      p.zero_grad();
      p.accumulate_grad(std::move(g));
      at += p.value().numel();
    }
    return;
  }
  std::vector<float> flat;
  for (const Variable& p : params) {
    if (p.has_grad()) {
      const std::vector<float> g = p.grad().to_host_vector();
      flat.insert(flat.end(), g.begin(), g.end());
    } else {
      flat.resize(flat.size() + static_cast<size_t>(p.value().numel()), 0.0f);
    }
  }
  comm.allreduce_sum_in_rank_order(flat);
  size_t at = 0;
  for (Variable p : params) {
    const int64_t n = p.value().numel();
    p.zero_grad();
    p.accumulate_grad(Tensor::from_host(std::span<const float>(flat.data() + at, static_cast<size_t>(n)), p.rows(),
                                        p.cols(), p.device()));
    at += static_cast<size_t>(n);
  }
}

int64_t correct(const Tensor& scores, const IndexTensor& labels, const IndexTensor& rows) {
  if (rows.numel() == 0) return 0;
  return std::llround(ops::accuracy(scores, labels, rows) * static_cast<double>(rows.numel()));
}

}  // namespace

DistTrainData prepare_part(const Communicator& comm, Part part, const PrepareOptions& options, Device device) {
  EW_REQUIRE(part.num_parts == comm.size() && part.rank == comm.rank(), "prepare_part: rank ", comm.rank(), " of ",
             comm.size(), " was given part ", part.rank, " of ", part.num_parts);
  EW_REQUIRE(part.num_owned > 0, "prepare_part: part ", part.rank, " owns no nodes (use fewer ranks)");
  DistTrainData data;
  data.part = std::move(part);
  data.local = prepare(data.part.local, device, options);
  // Scores are computed for owned rows only: keep their labels.
  const std::vector<int64_t>& labels = data.part.local.labels;
  data.local.labels = IndexTensor::vector(std::vector<int64_t>(labels.begin(), labels.begin() + data.part.num_owned), device);
  std::vector<int64_t> counts{static_cast<int64_t>(data.part.local.train_idx.size()),
                              static_cast<int64_t>(data.part.local.valid_idx.size()),
                              static_cast<int64_t>(data.part.local.test_idx.size())};
  comm.allreduce_sum(counts);
  data.global_train = counts[0];
  data.global_valid = counts[1];
  data.global_test = counts[2];
  // The halo exchange of the degrees needs data.part at its final address.
  const HaloExchange halo(comm, data.part);
  data.gcn_graph = gcn_graph_with_global_degrees(data.local.graph, halo);
  return data;
}

DistTrainResult fit_distributed(const Communicator& comm, DistNodeClassifier& model, const DistTrainData& data,
                                const TrainerOptions& options) {
  EW_REQUIRE(options.epochs >= 1, "fit_distributed: epochs (", options.epochs, ") must be >= 1");
  EW_REQUIRE(data.global_train > 0, "fit_distributed: the training split of '", data.local.name,
             "' is empty on every rank");
  EW_REQUIRE(data.global_valid > 0 || (options.selection == ModelSelection::LastEpoch && options.patience == 0),
             "fit_distributed: the validation split is empty: best-valid selection and early stopping need it");
  EW_REQUIRE(options.checkpoint_path.empty() && options.resume_path.empty(),
             "fit_distributed: checkpoints are not supported in distributed runs");
  const bool root = comm.rank() == 0;
  if (root) check_train_options("fit_distributed", options);
  Generator generator(options.seed);
  auto optimizer = make_optimizer(model.param_groups(options.weight_decay), options);
  train_detail::LossGuard loss_guard("Trainer", options.nonfinite_loss);
  DistTrainResult out;
  const std::vector<Variable> params = model.parameters();
  const TrainData& d = data.local;
  const Device device = d.labels.device();
  int64_t epoch_halo_bytes = 0;
  double halo_bytes = 0;
  EpochLoop loop;
  loop.report = root;
  loop.name = d.name;
  loop.selection = {"valid_acc", true, "valid_loss", false};  // as the single-process node task
  loop.train_step = [&](EpochRecord& rec) {
    comm.reset_bytes_sent();
    const auto t0 = train_detail::Clock::now();
    model.train();
    optimizer->zero_grad();
    Variable logits = model.forward(generator);
    Variable loss = cross_entropy_share(logits, d.labels, d.train_idx, data.global_train);
    std::vector<double> loss_sum{loss.value().to_host_vector()[0]};
    comm.allreduce_sum_in_rank_order(loss_sum);
    rec.loss = loss_sum[0];
    loss_guard.check(rec.loss, rec.epoch);  // the same value on every rank: all stop or none
    loss.backward();
    allreduce_gradients(comm, params, device);
    optimizer->step();
    synchronize(device);
    rec.epoch_ms = comm.allreduce_max(train_detail::seconds_between(t0, train_detail::Clock::now()) * 1e3);
    std::vector<int64_t> bytes{comm.bytes_sent()};
    comm.allreduce_sum(bytes);
    epoch_halo_bytes = bytes[0];
    halo_bytes += static_cast<double>(bytes[0]);
  };
  loop.evaluate = [&](EpochRecord& rec) {
    NoGradGuard guard;
    model.eval();
    const Tensor scores = model.forward(generator).value();
    model.train();
    std::vector<int64_t> counts{correct(scores, d.labels, d.train_idx), correct(scores, d.labels, d.valid_idx),
                                correct(scores, d.labels, d.test_idx)};
    comm.allreduce_sum(counts);
    std::vector<double> valid_loss{0.0};
    if (d.valid_idx.numel() > 0) {
      Tensor logp(scores.rows(), scores.cols(), scores.device());
      ops::log_softmax_rows(scores, logp);
      valid_loss[0] = static_cast<double>(ops::nll_loss(logp, d.labels, d.valid_idx, nullptr)) *
                      static_cast<double>(d.valid_idx.numel());
    }
    comm.allreduce_sum_in_rank_order(valid_loss);
    auto ratio = [](int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
    // The names and order of the single-process node task (train/node_evaluation.hpp).
    rec.metrics.set("train_acc", ratio(counts[0], data.global_train));
    rec.metrics.set("valid_acc", ratio(counts[1], data.global_valid));
    if (data.global_valid > 0) rec.metrics.set("valid_loss", valid_loss[0] / static_cast<double>(data.global_valid));
    rec.metrics.set("test_acc", ratio(counts[2], data.global_test));
  };
  loop.progress_tail = [&](const EpochRecord&) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "halo %.3f MB  (%d ranks)", static_cast<double>(epoch_halo_bytes) / 1e6,
                  comm.size());
    return std::string(buf);
  };
  run_training(options, loop, TrainingState{model, *optimizer, generator}, out.result);
  out.halo_bytes_per_epoch = halo_bytes / static_cast<double>(out.result.history.size());
  return out;
}

DataParallel data_parallel(const Communicator& comm) {
  DataParallel dp;
  dp.rank = comm.rank();
  dp.world_size = comm.size();
  dp.sum_gradients = [&comm](const std::vector<Variable>& params) {
    allreduce_gradients(comm, params, params.empty() ? Device::cpu() : params.front().device());
  };
  dp.sum = [&comm](double value) {
    std::vector<double> v{value};
    comm.allreduce_sum_in_rank_order(v);
    return v[0];
  };
  return dp;
}

}  // namespace edgewise::gnn::dist
