// BatchPipeline: sampling threads, an in-order hand-over bounded by queue_depth.
#include "edgewise/gnn/sampling/batch_pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <tuple>

#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/common/memory.hpp"
#include "edgewise/kernels/common/philox.hpp"
#include "sampling_core.hpp"

namespace edgewise::gnn {

namespace {

constexpr const char* kOp = "BatchPipeline";
// The shuffle's Philox stream; batches use (epoch << 32 | b) < 2^58, never this.
constexpr uint64_t kShuffleStream = ~uint64_t{0};

std::shared_ptr<HostBuffer> gather_rows(BufferPool& pool, const RowTable& table, std::span<const int64_t> ids) {
  auto out = pool.take(static_cast<int64_t>(ids.size()) * table.row_bytes);
  const size_t width = static_cast<size_t>(table.row_bytes);
  std::byte* to = out->data;
  for (int64_t id : ids) {
    std::memcpy(to, table.data + id * table.row_bytes, width);
    to += width;
  }
  return out;
}

}  // namespace

BufferPool::~BufferPool() {
  for (const Block& block : free_) release(block);
}

std::shared_ptr<HostBuffer> BufferPool::take(int64_t bytes) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t best = free_.size();
    for (size_t k = 0; k < free_.size(); ++k) {
      if (free_[k].capacity >= bytes && (best == free_.size() || free_[k].capacity < free_[best].capacity)) best = k;
    }
    if (best != free_.size()) {
      block = free_[best];
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  if (block.data == nullptr) {
    block.capacity = std::max<int64_t>(bytes + bytes / 4, 1);
    if (pinned_) block.data = static_cast<std::byte*>(pinned_host_allocate(static_cast<size_t>(block.capacity)));
    block.pinned = block.data != nullptr;
    if (!block.pinned) block.data = new std::byte[static_cast<size_t>(block.capacity)];
  }
  // The deleter holds the pool, so a batch outliving its pipeline still returns safely.
  std::shared_ptr<BufferPool> self = shared_from_this();
  return std::shared_ptr<HostBuffer>(new HostBuffer{block.data, bytes, block.pinned},
                                     [self, block](HostBuffer* buffer) {
                                       delete buffer;
                                       self->put(block);
                                     });
}

void BufferPool::put(Block block) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.size() < max_free_) {
      free_.push_back(block);
      return;
    }
  }
  release(block);
}

void BufferPool::release(Block block) noexcept {
  if (block.pinned) {
    pinned_host_free(block.data);
  } else {
    delete[] block.data;
  }
}

BatchPipeline::BatchPipeline(std::shared_ptr<const CscGraph> graph, HopSamplerOptions sampler,
                             std::vector<int64_t> inputs, std::vector<int64_t> input_time,
                             std::vector<RowTable> node_tables, std::vector<RowTable> edge_tables,
                             BatchPipelineOptions options)
    : graph_(std::move(graph)),
      sampler_(graph_->view(), std::move(sampler)),
      inputs_(std::move(inputs)),
      input_time_(std::move(input_time)),
      node_tables_(std::move(node_tables)),
      edge_tables_(std::move(edge_tables)),
      options_(options) {
  EW_REQUIRE(options_.batch_size >= 1, kOp, ": batch_size (", options_.batch_size, ") must be >= 1");
  EW_REQUIRE(options_.num_threads >= 1, kOp, ": num_threads (", options_.num_threads, ") must be >= 1");
  EW_REQUIRE(options_.queue_depth >= 1, kOp, ": queue_depth (", options_.queue_depth, ") must be >= 1");
  const int64_t N = graph_->view().num_nodes();
  const int64_t n = static_cast<int64_t>(inputs_.size());
  for (int64_t i = 0; i < n; ++i) {
    EW_REQUIRE(inputs_[i] >= 0 && inputs_[i] < N, kOp, ": input_nodes[", i, "] (", inputs_[i], ") must lie in [0, ",
               N, ")");
  }
  EW_REQUIRE(input_time_.empty() || static_cast<int64_t>(input_time_.size()) == n, kOp, ": input_time must hold ", n,
             " entries, one per input node (got ", input_time_.size(), ")");
  EW_REQUIRE(input_time_.empty() || graph_->view().temporal(), kOp,
             ": input_time needs node_time or edge_time (temporal sampling)");
  EW_REQUIRE(n == 0 || !graph_->view().temporal() || !input_time_.empty() || !graph_->node_time.empty(), kOp,
             ": sampling by edge time needs input_time (the seeds' times)");
  // The largest edge id a batch can report: an edge_id entry, or the CSC position where
  // the graph has none.
  const CscView view = graph_->view();
  int64_t max_edge_id = view.edge_id.empty() ? view.num_edges() - 1 : -1;
  view.edge_id.visit([&](const auto* ids) {
    for (size_t k = 0; k < view.edge_id.size(); ++k) max_edge_id = std::max<int64_t>(max_edge_id, ids[k]);
  });
  for (size_t t = 0; t < node_tables_.size(); ++t) {
    EW_REQUIRE(node_tables_[t].rows >= N && node_tables_[t].row_bytes >= 0, kOp, ": node table ", t, " has ",
               node_tables_[t].rows, " rows; it needs one per node (", N, ")");
  }
  for (size_t t = 0; t < edge_tables_.size(); ++t) {
    EW_REQUIRE(edge_tables_[t].rows > max_edge_id && edge_tables_[t].row_bytes >= 0, kOp, ": edge table ", t,
               " has ", edge_tables_[t].rows, " rows; it needs one per edge (", max_edge_id + 1, ")");
  }
  input_batches_ = options_.drop_last ? n / options_.batch_size : (n + options_.batch_size - 1) / options_.batch_size;
  num_batches_ = input_batches_;
  // Blocks in flight: the queue, the batches being made, the one the consumer holds,
  // and the one it is dropping, per table.
  const size_t tables = node_tables_.size() + edge_tables_.size();
  pool_ = std::make_shared<BufferPool>(tables * static_cast<size_t>(options_.queue_depth + options_.num_threads + 2),
                                       options_.pin_memory);
}

BatchPipeline::~BatchPipeline() { stop(); }

void BatchPipeline::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cancel_.store(true, std::memory_order_relaxed);  // batches in progress end at their next check
  space_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  ready_.clear();
  failed_.clear();
}

void BatchPipeline::start_epoch(uint64_t epoch) {
  EW_REQUIRE(epoch < (uint64_t{1} << 26), kOp, ": epoch (", epoch, ") must be below 2^26");
  stop();
  given_ = SeedBatches{};
  num_batches_ = input_batches_;
  const int64_t n = static_cast<int64_t>(inputs_.size());
  order_.resize(static_cast<size_t>(n));
  std::iota(order_.begin(), order_.end(), int64_t{0});
  if (options_.shuffle) {  // Fisher-Yates on Philox(seed, epoch) draws
    for (int64_t i = n - 1; i > 0; --i) {
      const PhiloxBlock block = philox_block(options_.seed, kShuffleStream - epoch, static_cast<uint64_t>(i));
      const int64_t j = static_cast<int64_t>(sampling::draw_below(block, 0, static_cast<uint64_t>(i + 1)));
      std::swap(order_[i], order_[j]);
    }
  }
  begin_epoch(epoch);
}

void BatchPipeline::start_epoch(uint64_t epoch, SeedBatches batches) {
  EW_REQUIRE(epoch < (uint64_t{1} << 26), kOp, ": epoch (", epoch, ") must be below 2^26");
  const int64_t N = graph_->view().num_nodes();
  const int64_t n = static_cast<int64_t>(batches.seeds.size());
  const std::vector<int64_t>& offsets = batches.offsets;
  EW_REQUIRE(!offsets.empty() && offsets.front() == 0 && offsets.back() == n, kOp,
             ": offsets must run from 0 to the number of seeds (", n, ")");
  for (size_t b = 1; b < offsets.size(); ++b) {
    EW_REQUIRE(offsets[b] >= offsets[b - 1], kOp, ": offsets must not decrease (offsets[", b, "] = ", offsets[b],
               " < ", offsets[b - 1], ")");
  }
  for (int64_t i = 0; i < n; ++i) {
    EW_REQUIRE(batches.seeds[i] >= 0 && batches.seeds[i] < N, kOp, ": seeds[", i, "] (", batches.seeds[i],
               ") must lie in [0, ", N, ")");
  }
  EW_REQUIRE(batches.seed_time.empty() || static_cast<int64_t>(batches.seed_time.size()) == n, kOp,
             ": seed_time must hold ", n, " entries, one per seed (got ", batches.seed_time.size(), ")");
  EW_REQUIRE(batches.seed_time.empty() || graph_->view().temporal(), kOp,
             ": seed_time needs node_time or edge_time (temporal sampling)");
  EW_REQUIRE(!graph_->view().temporal() || !batches.seed_time.empty() || !graph_->node_time.empty(), kOp,
             ": sampling by edge time needs seed_time (the seeds' times)");
  stop();
  num_batches_ = static_cast<int64_t>(offsets.size()) - 1;
  given_ = std::move(batches);
  order_.clear();
  begin_epoch(epoch);
}

void BatchPipeline::begin_epoch(uint64_t epoch) {
  EW_REQUIRE(num_batches_ < (int64_t{1} << 32), kOp, ": at most 2^32 batches per epoch");
  epoch_ = epoch;
  next_to_make_ = 0;
  next_to_hand_ = 0;
  stopping_ = false;
  cancel_.store(false, std::memory_order_relaxed);
  const int workers = static_cast<int>(std::min<int64_t>(options_.num_threads, std::max<int64_t>(num_batches_, 1)));
  for (int w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
}

void BatchPipeline::work() {
  HopSamplerScratch scratch;
  scratch.set_cancel_flag(&cancel_);
  for (;;) {
    int64_t b;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      // Without overlap, one batch per thread from the one the consumer waits for, so a
      // thread that finishes before the consumer wakes does not start another.
      space_cv_.wait(lock, [&] {
        return stopping_ || next_to_make_ >= num_batches_ ||
               (options_.overlap ? next_to_make_ <= next_to_hand_ + options_.queue_depth
                                 : consumer_waiting_ && next_to_make_ < next_to_hand_ + options_.num_threads);
      });
      if (stopping_ || next_to_make_ >= num_batches_) break;
      b = next_to_make_++;
    }
    SampledBatch batch;
    std::exception_ptr error;
    try {
      batch = make(b, scratch);
    } catch (const SamplingCancelled&) {
      break;  // stop() is joining this thread; the batch is not wanted
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error) {
        failed_.emplace(b, error);
      } else {
        ready_.emplace(b, std::move(batch));
      }
    }
    ready_cv_.notify_all();
  }
  ready_cv_.notify_all();
}

SampledBatch BatchPipeline::make(int64_t b, HopSamplerScratch& scratch) const {
  SampledBatch batch;
  batch.index = b;
  std::vector<int64_t> seeds, times;
  if (!given_.offsets.empty()) {
    const int64_t begin = given_.offsets[b], end = given_.offsets[b + 1];
    batch.input_id.resize(static_cast<size_t>(end - begin));
    std::iota(batch.input_id.begin(), batch.input_id.end(), begin);
    seeds.assign(given_.seeds.begin() + begin, given_.seeds.begin() + end);
    if (!given_.seed_time.empty()) times.assign(given_.seed_time.begin() + begin, given_.seed_time.begin() + end);
  } else {
    const int64_t n = static_cast<int64_t>(order_.size());
    const int64_t begin = b * options_.batch_size, end = std::min(n, begin + options_.batch_size);
    batch.input_id.assign(order_.begin() + begin, order_.begin() + end);
    seeds.resize(batch.input_id.size());
    for (size_t i = 0; i < seeds.size(); ++i) seeds[i] = inputs_[batch.input_id[i]];
    if (!input_time_.empty()) {
      times.resize(seeds.size());
      for (size_t i = 0; i < seeds.size(); ++i) times[i] = input_time_[batch.input_id[i]];
    }
  }
  batch.subgraph = sampler_.sample(seeds, times, options_.seed, (epoch_ << 32) | static_cast<uint64_t>(b), scratch);
  if (options_.edge_index) {
    const std::vector<int64_t>& row = batch.subgraph.row;
    const std::vector<int64_t>& col = batch.subgraph.col;
    batch.edge_index.resize(row.size() + col.size());
    std::copy(row.begin(), row.end(), batch.edge_index.begin());
    std::copy(col.begin(), col.end(), batch.edge_index.begin() + static_cast<std::ptrdiff_t>(row.size()));
  }
  for (const RowTable& table : node_tables_) {
    if (scratch.cancelled()) throw SamplingCancelled{};
    batch.node_rows.push_back(gather_rows(*pool_, table, batch.subgraph.node));
  }
  for (const RowTable& table : edge_tables_) {
    if (scratch.cancelled()) throw SamplingCancelled{};
    batch.edge_rows.push_back(gather_rows(*pool_, table, batch.subgraph.edge));
  }
  return batch;
}

BatchPipeline::Next BatchPipeline::next(SampledBatch& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (next_to_hand_ >= num_batches_ || threads_.empty()) return Next::End;
  const int64_t b = next_to_hand_;
  const auto has_arrived = [&] { return ready_.count(b) != 0 || failed_.count(b) != 0; };
  bool arrived = has_arrived();
  if (!arrived) {
    consumer_waiting_ = true;
    if (!options_.overlap) space_cv_.notify_all();
    arrived = ready_cv_.wait_for(lock, timeout, has_arrived);
    consumer_waiting_ = false;
  }
  if (!arrived) return Next::Timeout;
  if (auto f = failed_.find(b); f != failed_.end()) {
    const std::exception_ptr error = f->second;
    lock.unlock();
    stop();  // the epoch ends at its first failed batch
    std::rethrow_exception(error);
  }
  auto r = ready_.find(b);
  out = std::move(r->second);
  ready_.erase(r);
  ++next_to_hand_;
  lock.unlock();
  space_cv_.notify_all();
  return Next::Batch;
}

}  // namespace edgewise::gnn
