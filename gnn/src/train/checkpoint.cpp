// Training checkpoint archive (version 2). Keys (scalars have shape (), "<i>" a parameter position):
//   checkpoint.version                          int64   2
//   trainer.epoch                               int64   last completed epoch
//   trainer.stopped_early                       uint8   0 / 1
//   trainer.elapsed_seconds                     float64 training time so far
//   rng.seed, rng.next_stream                   uint64  the Generator
//   model.<parameter name>                      float32 [rows, cols]
//   optim.kind                                  uint8   [n] ASCII "adam", "adamw" or "sgd"
//   optim.<i>.exp_avg, optim.<i>.exp_avg_sq     float32 [rows, cols]   (Adam / AdamW)
//   optim.<i>.step                              int64                  (Adam / AdamW)
//   optim.<i>.momentum_buffer                   float32 [rows, cols]   (SGD)
//   history.epoch                               int64   [epochs]
//   history.{loss, epoch_ms, lr}                float64 [epochs]
//   history.evaluated                           uint8   [epochs]
//   history.metric.<name>                       float64 [epochs]  one per metric (NaN where not evaluated)
//   selection.best_epoch, selection.since_best  int64
//   selection.best.<name>                       float64 the selected epoch's metrics
//   selection.last_epoch                        int64   last evaluated epoch
//   sampler.priorities                          float32 [nodes]  (loss-prioritised seeds only)
//   run.<key>                                   uint8   [n] UTF-8 value of each TrainOptions::run_tags entry
#include "train/checkpoint.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

#include "edgewise/gnn/data/npz_writer.hpp"
#include "edgewise/kernels/common/check.hpp"

namespace edgewise::gnn::train_detail {

namespace {

constexpr int64_t kFormatVersion = 2;
constexpr const char* kModelPrefix = "model.";
constexpr const char* kOptimPrefix = "optim.";
constexpr const char* kRunPrefix = "run.";
constexpr const char* kMetricPrefix = "history.metric.";
constexpr const char* kBestPrefix = "selection.best.";

struct HistoryField {
  const char* key;
  double EpochRecord::*member;
};
constexpr HistoryField kHistoryFields[] = {
    {"history.loss", &EpochRecord::loss}, {"history.epoch_ms", &EpochRecord::epoch_ms}, {"history.lr", &EpochRecord::lr}};


NpyArray matrix(const Tensor& t) {
  return npy_array(t.to_host_vector(), {t.rows(), t.cols()});
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Reads typed entries and remembers which keys were used, so that unknown ones can be refused.
class CheckpointReader {
 public:
  explicit CheckpointReader(const std::string& path) : archive_(NpzArchive::open(path)) {
    for (const std::string& key : archive_.keys()) unread_.insert(key);
  }

  bool has(const std::string& key) const { return archive_.contains(key); }
  std::vector<std::string> keys_with_prefix(const char* prefix) const {
    std::vector<std::string> out;
    for (const std::string& key : archive_.keys()) {
      if (starts_with(key, prefix)) out.push_back(key);
    }
    return out;
  }

  // `key` as T, with exactly the dtype written and `ndim` dimensions (-1: any).
  template <class T>
  std::vector<T> values(const std::string& key, int64_t ndim, NpyArray* array_out = nullptr) {
    if (!archive_.contains(key)) fail("missing key '" + key + "'");
    NpyArray a = archive_.read(key);
    unread_.erase(key);
    const NpyDtype want = npy_dtype<T>();
    if (a.dtype != want || (ndim >= 0 && a.ndim() != ndim)) {
      fail("key '" + key + "' is " + a.dtype.str() + " with " + std::to_string(a.ndim()) + " dimensions, expected " +
           want.str() + (ndim >= 0 ? " with " + std::to_string(ndim) : std::string()));
    }
    std::vector<T> out(static_cast<size_t>(a.size()));
    if (!out.empty()) std::memcpy(out.data(), a.data.data(), a.data.size());
    if (array_out) *array_out = std::move(a);
    return out;
  }
  template <class T>
  T scalar(const std::string& key) {
    return values<T>(key, 0).front();
  }
  // A float32 matrix; a value that is not finite is refused (a corrupt or edited file).
  Tensor tensor(const std::string& key) {
    NpyArray a;
    std::vector<float> v = values<float>(key, 2, &a);
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) {
        const size_t cols = static_cast<size_t>(std::max<int64_t>(a.shape[1], 1));
        fail("key '" + key + "' holds a non-finite value (" + std::to_string(v[i]) + ") at [" +
             std::to_string(i / cols) + ", " + std::to_string(i % cols) + "]");
      }
    }
    return Tensor::from_host(v, a.shape[0], a.shape[1]);
  }
  std::string text(const std::string& key) {
    const std::vector<uint8_t> bytes = values<uint8_t>(key, 1);
    return std::string(bytes.begin(), bytes.end());
  }

  void refuse_unread() const {
    if (!unread_.empty()) fail("unexpected key '" + *unread_.begin() + "'");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw DataFileError("checkpoint '" + archive_.path() + "': " + what);
  }

 private:
  NpzArchive archive_;
  std::set<std::string> unread_;
};

}  // namespace

void write_trainer_checkpoint(const std::string& path, const TrainerCheckpoint& c) {
  NpzEntries e;
  e.emplace_back("checkpoint.version", npy_scalar<int64_t>(kFormatVersion));
  e.emplace_back("trainer.epoch", npy_scalar<int64_t>(c.epoch));
  e.emplace_back("trainer.stopped_early", npy_scalar<uint8_t>(c.stopped_early ? 1 : 0));
  e.emplace_back("trainer.elapsed_seconds", npy_scalar<double>(c.elapsed_seconds));
  e.emplace_back("rng.seed", npy_scalar<uint64_t>(c.generator.seed));
  e.emplace_back("rng.next_stream", npy_scalar<uint64_t>(c.generator.next_stream));
  for (const auto& [name, t] : c.model) e.emplace_back(kModelPrefix + name, matrix(t));
  const std::vector<uint8_t> kind(c.optimizer.kind.begin(), c.optimizer.kind.end());
  e.emplace_back("optim.kind", npy_array(kind, {static_cast<int64_t>(kind.size())}));
  for (const auto& [key, t] : c.optimizer.tensors) e.emplace_back(kOptimPrefix + key, matrix(t));
  for (const auto& [key, v] : c.optimizer.counters) e.emplace_back(kOptimPrefix + key, npy_scalar<int64_t>(v));
  const auto epochs = static_cast<int64_t>(c.history.size());
  std::vector<int64_t> epoch_numbers;
  std::vector<uint8_t> evaluated;
  for (const EpochRecord& r : c.history) {
    epoch_numbers.push_back(r.epoch);
    evaluated.push_back(r.evaluated ? 1 : 0);
  }
  e.emplace_back("history.epoch", npy_array(epoch_numbers, {epochs}));
  e.emplace_back("history.evaluated", npy_array(evaluated, {epochs}));
  for (const HistoryField& f : kHistoryFields) {
    std::vector<double> column;
    for (const EpochRecord& r : c.history) column.push_back(r.*f.member);
    e.emplace_back(f.key, npy_array(column, {epochs}));
  }
  for (const std::string& name : metric_names(c.history)) {
    std::vector<double> column;
    for (const EpochRecord& r : c.history) column.push_back(r.metric(name));
    e.emplace_back(kMetricPrefix + name, npy_array(column, {epochs}));
  }
  const SelectionState& s = c.selection;
  e.emplace_back("selection.best_epoch", npy_scalar<int64_t>(s.best_epoch));
  for (const auto& [name, value] : s.best.items()) e.emplace_back(kBestPrefix + name, npy_scalar<double>(value));
  e.emplace_back("selection.since_best", npy_scalar<int64_t>(s.since_best));
  e.emplace_back("selection.last_epoch", npy_scalar<int64_t>(c.last_evaluated_epoch));
  if (!c.seed_priorities.empty()) {
    e.emplace_back("sampler.priorities",
                   npy_array(c.seed_priorities, {static_cast<int64_t>(c.seed_priorities.size())}));
  }
  for (const auto& [key, value] : c.run_tags) {
    const std::vector<uint8_t> bytes(value.begin(), value.end());
    e.emplace_back(kRunPrefix + key, npy_array(bytes, {static_cast<int64_t>(bytes.size())}));
  }
  write_npz(path, e);
}

TrainerCheckpoint read_trainer_checkpoint(const std::string& path) {
  CheckpointReader in(path);
  TrainerCheckpoint c;
  const auto version = in.scalar<int64_t>("checkpoint.version");
  if (version != kFormatVersion) {
    in.fail("checkpoint.version is " + std::to_string(version) + ", this build reads " +
            std::to_string(kFormatVersion));
  }
  c.epoch = in.scalar<int64_t>("trainer.epoch");
  c.stopped_early = in.scalar<uint8_t>("trainer.stopped_early") != 0;
  c.elapsed_seconds = in.scalar<double>("trainer.elapsed_seconds");
  c.generator.seed = in.scalar<uint64_t>("rng.seed");
  c.generator.next_stream = in.scalar<uint64_t>("rng.next_stream");
  for (const std::string& key : in.keys_with_prefix(kModelPrefix)) {
    c.model.insert(key.substr(std::strlen(kModelPrefix)), in.tensor(key));
  }
  const std::vector<uint8_t> kind = in.values<uint8_t>("optim.kind", 1);
  c.optimizer.kind.assign(kind.begin(), kind.end());
  for (const std::string& key : in.keys_with_prefix(kOptimPrefix)) {
    if (key == "optim.kind") continue;
    const std::string name = key.substr(std::strlen(kOptimPrefix));
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".step") == 0) {
      c.optimizer.counters[name] = in.scalar<int64_t>(key);
    } else {
      c.optimizer.tensors.insert(name, in.tensor(key));
    }
  }
  const std::vector<int64_t> epochs = in.values<int64_t>("history.epoch", 1);
  c.history.resize(epochs.size());
  for (size_t i = 0; i < epochs.size(); ++i) c.history[i].epoch = epochs[i];
  const auto column_of = [&](const std::string& key) {
    std::vector<double> column = in.values<double>(key, 1);
    if (column.size() != epochs.size()) {
      in.fail("key '" + key + "' has " + std::to_string(column.size()) + " values for " +
              std::to_string(epochs.size()) + " epochs");
    }
    return column;
  };
  for (const HistoryField& f : kHistoryFields) {
    const std::vector<double> column = column_of(f.key);
    for (size_t i = 0; i < column.size(); ++i) c.history[i].*f.member = column[i];
  }
  const std::vector<uint8_t> evaluated = in.values<uint8_t>("history.evaluated", 1);
  if (evaluated.size() != epochs.size()) in.fail("key 'history.evaluated' does not have one value per epoch");
  for (size_t i = 0; i < epochs.size(); ++i) c.history[i].evaluated = evaluated[i] != 0;
  for (const std::string& key : in.keys_with_prefix(kMetricPrefix)) {
    const std::vector<double> column = column_of(key);
    const std::string name = key.substr(std::strlen(kMetricPrefix));
    for (size_t i = 0; i < column.size(); ++i)
      if (c.history[i].evaluated) c.history[i].metrics.set(name, column[i]);
  }
  SelectionState& s = c.selection;
  s.best_epoch = in.scalar<int64_t>("selection.best_epoch");
  for (const std::string& key : in.keys_with_prefix(kBestPrefix))
    s.best.set(key.substr(std::strlen(kBestPrefix)), in.scalar<double>(key));
  s.since_best = in.scalar<int64_t>("selection.since_best");
  c.last_evaluated_epoch = in.scalar<int64_t>("selection.last_epoch");
  if (in.has("sampler.priorities")) c.seed_priorities = in.values<float>("sampler.priorities", 1);
  for (const std::string& key : in.keys_with_prefix(kRunPrefix))
    c.run_tags.emplace_back(key.substr(std::strlen(kRunPrefix)), in.text(key));
  in.refuse_unread();
  bool consistent = c.epoch >= 1 && static_cast<int64_t>(c.history.size()) == c.epoch;
  for (size_t i = 0; i < c.history.size(); ++i) consistent = consistent && c.history[i].epoch == int64_t(i) + 1;
  if (!consistent) {
    in.fail("history.epoch is not 1, 2, ..., trainer.epoch (" + std::to_string(c.epoch) + ")");
  }
  if (c.last_evaluated_epoch < 0 || c.last_evaluated_epoch > c.epoch ||
      c.selection.best_epoch > c.last_evaluated_epoch) {
    in.fail("selection.last_epoch (" + std::to_string(c.last_evaluated_epoch) + ") or selection.best_epoch (" +
            std::to_string(c.selection.best_epoch) + ") is outside the " + std::to_string(c.epoch) + " epochs");
  }
  return c;
}

void check_checkpoint_path(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path dir = target.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  EW_REQUIRE(!target.filename().empty() && !fs::is_directory(target, ec), "checkpoint_path '", path,
             "' names a directory, not a file");
  EW_REQUIRE(fs::is_directory(dir, ec), "checkpoint_path '", path, "': the directory '", dir.string(),
             "' does not exist");
  EW_REQUIRE(::access(dir.c_str(), W_OK) == 0, "checkpoint_path '", path, "': the directory '", dir.string(),
             "' is not writable");
}

void check_checkpoint_options(const char* op, int64_t every, const std::string& path) {
  EW_REQUIRE(every >= 0, op, ": checkpoint_every (", every, ") must be >= 0");
  EW_REQUIRE(every == 0 || !path.empty(), op, ": checkpoint_every (", every, ") needs a checkpoint_path");
  if (!path.empty()) check_checkpoint_path(path);
}

void check_run_tags(const std::string& path, const RunTags& saved, const RunTags& now) {
  const auto find = [](const RunTags& tags, const std::string& key) -> const std::string* {
    for (const auto& [k, v] : tags)
      if (k == key) return &v;
    return nullptr;
  };
  for (const auto& [key, value] : now) {
    const std::string* was = find(saved, key);
    EW_REQUIRE(was, "resume: checkpoint '", path, "' does not record ", key, " (this run has ", key, " ", value,
               "): it was written by another kind of run");
    EW_REQUIRE(*was == value, "resume: checkpoint '", path, "' was written with ", key, " ", *was, ", this run has ",
               key, " ", value, " (a resumed run must continue the same run)");
  }
  for (const auto& [key, value] : saved)
    EW_REQUIRE(find(now, key), "resume: checkpoint '", path, "' was written with ", key, " ", value,
               ", which this run does not set");
}

void save_checkpoint(const std::string& path, int64_t epoch, const RunState& run, double elapsed_seconds,
                     bool finished) {
  TrainerCheckpoint c;
  c.epoch = epoch;
  c.stopped_early = finished;
  c.elapsed_seconds = elapsed_seconds;
  c.model = run.training.model.state_dict();
  c.optimizer = run.training.optimizer.state_dict();
  c.generator = run.training.generator.state();
  c.history = run.result.history;
  c.selection = run.selector.state();
  c.last_evaluated_epoch = run.selector.last_epoch();
  if (run.training.seeds && *run.training.seeds) c.seed_priorities = (*run.training.seeds)->priorities();
  c.run_tags = run.run_tags;
  write_trainer_checkpoint(path, c);
}

int64_t resume_from_checkpoint(const std::string& path, int64_t epochs, const RunState& run,
                               double& elapsed_seconds) {
  TrainerCheckpoint c = read_trainer_checkpoint(path);
  EW_REQUIRE(c.epoch <= epochs, "resume: checkpoint '", path, "' is at epoch ", c.epoch, ", past the requested ",
             epochs, " epochs");
  check_run_tags(path, c.run_tags, run.run_tags);
  // Check everything before changing anything: the model is the caller's.
  std::unique_ptr<SeedSampler> seeds;
  std::unique_ptr<SeedSampler>* const run_seeds = run.training.seeds;
  try {
    run.training.model.check_state_dict(c.model);
    run.training.optimizer.check_state_dict(c.optimizer);
    const bool wants_seeds = run_seeds && *run_seeds;
    EW_REQUIRE(wants_seeds == !c.seed_priorities.empty(), "key 'sampler.priorities' is ",
               c.seed_priorities.empty() ? "absent" : "present", " but this run ",
               wants_seeds ? "samples seeds by loss priority" : "shuffles its seeds");
    if (wants_seeds) {
      EW_REQUIRE(static_cast<int64_t>(c.seed_priorities.size()) == (*run_seeds)->num_nodes(),
                 "key 'sampler.priorities' has ", c.seed_priorities.size(), " values for ", (*run_seeds)->num_nodes(),
                 " nodes");
      seeds = std::make_unique<SeedSampler>(c.seed_priorities);
    }
  } catch (const std::invalid_argument& e) {
    detail::throw_invalid_argument("resume: checkpoint '", path, "' does not fit ", run.training.model.describe(),
                                   ": ", e.what());
  }
  run.training.model.load_state_dict(c.model);
  run.training.optimizer.load_state_dict(c.optimizer);
  run.training.generator.set_state(c.generator);
  if (seeds) *run_seeds = std::move(seeds);
  run.result.history = std::move(c.history);
  run.result.stopped_early = c.stopped_early;
  const EpochRecord* last = c.last_evaluated_epoch > 0 ? &run.result.history[c.last_evaluated_epoch - 1] : nullptr;
  run.selector.restore(c.selection, last, run.result);
  elapsed_seconds = c.elapsed_seconds;
  return c.stopped_early ? epochs + 1 : c.epoch + 1;
}

}  // namespace edgewise::gnn::train_detail
