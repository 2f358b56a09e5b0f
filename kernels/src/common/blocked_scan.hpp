// BlockedScan: the CPU two-pass blocked scan (OpenMP) behind every "count, then
// place" op (boundary flags -> scan -> materialise, compaction, histogram offsets).
//
// [0, n) is cut into contiguous blocks. Pass 1 counts each block in parallel; a
// serial exclusive scan of the (few) block counts gives every block its first output
// slot; pass 2 places each block's items from that slot, in parallel. Between the
// passes the caller knows the total and may check it (e.g. against an output's
// capacity) and throw before anything is written: the passes are separate parallel
// regions, so no exception ever crosses an OpenMP region.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace edgewise::detail {

class BlockedScan {
 public:
  // One block per OpenMP thread, each at least `min_per_block` items (so small
  // inputs run as one block, without a fork/join).
  explicit BlockedScan(int64_t n, int64_t min_per_block = int64_t{1} << 15)
      : n_(n),
        blocks_(std::clamp<int64_t>(n / std::max<int64_t>(min_per_block, 1), 1, omp_get_max_threads())),
        before_(static_cast<std::size_t>(blocks_ + 1), 0) {}

  int64_t size() const noexcept { return n_; }
  int64_t blocks() const noexcept { return blocks_; }
  int64_t begin(int64_t b) const noexcept { return n_ / blocks_ * b + std::min(b, n_ % blocks_); }
  int64_t end(int64_t b) const noexcept { return begin(b + 1); }

  // Pass 1: count(b, begin, end) -> int64_t for every block, in parallel. Returns the
  // total; before(b) is then the sum of the counts of blocks < b.
  template <class Count>
  int64_t count(const Count& count_block) {
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(blocks_))
    for (int64_t b = 0; b < blocks_; ++b) before_[b + 1] = count_block(b, begin(b), end(b));
    for (int64_t b = 0; b < blocks_; ++b) before_[b + 1] += before_[b];
    return before_[blocks_];
  }

  int64_t before(int64_t b) const noexcept { return before_[b]; }
  int64_t total() const noexcept { return before_[blocks_]; }

  // Pass 2: place(b, begin, end, before(b)) for every block, in parallel.
  template <class Place>
  void place(const Place& place_block) const {
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(blocks_))
    for (int64_t b = 0; b < blocks_; ++b) place_block(b, begin(b), end(b), before_[b]);
  }

 private:
  int64_t n_;
  int64_t blocks_;
  std::vector<int64_t> before_;  // [blocks + 1]
};

}  // namespace edgewise::detail
