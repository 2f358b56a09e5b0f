// BatchPipeline: native threads that sample minibatches ahead of the consumer and
// gather their node and edge rows, handed over in order through a bounded queue.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "edgewise/gnn/sampling/csc_graph.hpp"
#include "edgewise/gnn/sampling/hop_sampler.hpp"

namespace edgewise::gnn {

// A borrowed row-major table whose rows a batch gathers: node features and labels
// (rows = nodes), edge features (rows = edge ids). Rows are copied byte for byte, so
// any element type works; the caller keeps `data` alive while the pipeline runs.
struct RowTable {
  const std::byte* data = nullptr;
  int64_t rows = 0;
  int64_t row_bytes = 0;
};

// Gathered rows (every byte written by the gather). The memory comes from the
// pipeline's BufferPool and returns there when the last reference goes, so a steady
// stream of batches reuses pages already mapped instead of faulting in new ones.
struct HostBuffer {
  std::byte* data = nullptr;
  int64_t bytes = 0;
  bool pinned = false;  // page-locked: a CUDA device copies it asynchronously
};

// Free blocks kept for reuse, at most max_free of them (the rest are released).
// pinned: blocks are page-locked where the CUDA runtime provides it (a device is
// present), pageable otherwise.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  explicit BufferPool(size_t max_free, bool pinned = false) : max_free_(max_free), pinned_(pinned) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  // A buffer of `bytes`: the smallest free block that fits, else a new one with a
  // quarter to spare (batch sizes vary).
  std::shared_ptr<HostBuffer> take(int64_t bytes);

 private:
  struct Block {
    std::byte* data = nullptr;
    int64_t capacity = 0;
    bool pinned = false;
  };
  void put(Block block);
  static void release(Block block) noexcept;
  std::mutex mutex_;
  std::vector<Block> free_;
  size_t max_free_;
  bool pinned_;
};

struct SampledBatch {
  int64_t index = 0;              // position in the epoch
  std::vector<int64_t> input_id;  // positions in the input list of this batch's seeds
  SampledSubgraph subgraph;
  // node_rows[t]: node_tables[t]'s rows of subgraph.node, in order; edge_rows[t]:
  // edge_tables[t]'s rows of subgraph.edge.
  std::vector<std::shared_ptr<HostBuffer>> node_rows;
  std::vector<std::shared_ptr<HostBuffer>> edge_rows;
  // With BatchPipelineOptions::edge_index: subgraph.row then subgraph.col, one [2, m]
  // block (PyG's edge_index), made on the sampling thread.
  std::vector<int64_t> edge_index;
};

struct BatchPipelineOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  bool drop_last = false;
  uint64_t seed = 0;     // with the epoch, fixes the order and every draw
  int num_threads = 1;   // sampling threads
  int queue_depth = 4;   // batches sampled ahead of the consumer, at most
  bool edge_index = false;  // also deliver SampledBatch::edge_index
  // false: threads start a batch only while the consumer waits in next(). For a
  // consumer whose own threads already take every core (CPU training), sampling
  // beside it slows every parallel region it joins more than the sampling saves.
  bool overlap = true;
  // Gather rows into page-locked memory (when a CUDA device is present), so a batch
  // copies to the device asynchronously and without a staging copy.
  bool pin_memory = false;
};

// Seed lists given per batch for one epoch instead of cut from the inputs: batch b's
// seeds are seeds[offsets[b], offsets[b + 1]) (a link loader's batches: each batch's
// endpoints, deduplicated unless the sampler is disjoint), seed_time one time per
// seed or empty.
struct SeedBatches {
  std::vector<int64_t> seeds;
  std::vector<int64_t> offsets;  // num_batches + 1 entries, from 0 to seeds.size()
  std::vector<int64_t> seed_time;
};

// Epoch e's batches: the inputs in order (or shuffled by Philox(seed, e)), cut into
// batch_size pieces; batch b is sampled with stream (e << 32 | b), so the batches are
// the same for any thread count and any consumer speed. At most queue_depth batches
// exist beyond the one last handed out (memory is bounded by it). A batch that fails
// (a sampler error, out of memory) is rethrown by next() in its turn, and the epoch
// stops; destroying the pipeline or stop() ends the threads without waiting for the
// epoch.
class BatchPipeline {
 public:
  // inputs: seed nodes, each in [0, N) (positions are what input_id reports);
  // input_time: one seed time per input, or empty. Tables: rows >= N (nodes) or >
  // every edge id (edges). Throws std::invalid_argument naming the bad argument.
  BatchPipeline(std::shared_ptr<const CscGraph> graph, HopSamplerOptions sampler, std::vector<int64_t> inputs,
                std::vector<int64_t> input_time, std::vector<RowTable> node_tables, std::vector<RowTable> edge_tables,
                BatchPipelineOptions options);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  int64_t num_batches() const noexcept { return num_batches_; }
  const HopSampler& sampler() const noexcept { return sampler_; }

  // Stops any epoch in progress and starts epoch `epoch`.
  void start_epoch(uint64_t epoch);
  // The same with the epoch's batches given (input_id then reports positions in
  // batches.seeds); num_batches() is theirs until the next start_epoch. Checks them
  // before stopping the epoch in progress.
  void start_epoch(uint64_t epoch, SeedBatches batches);

  enum class Next { Batch, End, Timeout };
  // Waits up to `timeout` for the next batch in order; Batch fills `out`. Rethrows a
  // failed batch's exception (the epoch is then over).
  Next next(SampledBatch& out, std::chrono::milliseconds timeout);

  // Ends the epoch: the threads drop their current batch at its next cancel check
  // (HopSamplerScratch::set_cancel_flag) and exit.
  void stop();

 private:
  void begin_epoch(uint64_t epoch);
  void work();
  SampledBatch make(int64_t b, HopSamplerScratch& scratch) const;

  std::shared_ptr<const CscGraph> graph_;
  HopSampler sampler_;
  std::vector<int64_t> inputs_;
  std::vector<int64_t> input_time_;
  std::vector<RowTable> node_tables_;
  std::vector<RowTable> edge_tables_;
  BatchPipelineOptions options_;
  int64_t num_batches_ = 0;
  int64_t input_batches_ = 0;  // what inputs_ cut into
  std::shared_ptr<BufferPool> pool_;
  SeedBatches given_;          // this epoch's batches when given (offsets non-empty)

  // One epoch's state, guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable ready_cv_;  // a batch arrived, or a worker exited
  std::condition_variable space_cv_;  // the consumer took one, or stop
  std::vector<int64_t> order_;        // input positions in epoch order
  uint64_t epoch_ = 0;
  int64_t next_to_make_ = 0;
  int64_t next_to_hand_ = 0;
  bool consumer_waiting_ = false;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};  // set by stop(), read by the samplers mid-batch
  std::map<int64_t, SampledBatch> ready_;
  std::map<int64_t, std::exception_ptr> failed_;
  std::vector<std::thread> threads_;
};

}  // namespace edgewise::gnn
