// run_length_encode logic shared by the CPU and CUDA drivers: chunked keys addressed
// by global position, and the run-boundary test (a run starts where a key differs
// from the key before it, looking across chunk seams and over empty chunks).
#pragma once

#include <cstdint>

#include "edgewise/kernels/common/bounds.hpp"
#include "edgewise/kernels/common/hd.hpp"

namespace edgewise::rle_detail {

// The logical vector formed by `chunks` arrays: chunk c holds global positions
// [start[c], start[c + 1]); start[0] == 0, start[chunks] == N. Pointers and starts
// live where the threads that read them run (host memory or device memory).
template <class K>
struct ChunkedKeys {
  const K* const* chunk = nullptr;  // [chunks]
  const int64_t* start = nullptr;   // [chunks + 1], nondecreasing
  int64_t chunks = 0;

  EW_HD_INLINE int64_t size() const { return start[chunks]; }
  // The chunk holding global position i (0 <= i < N): the last chunk starting at or
  // before i, which is never an empty chunk.
  EW_HD_INLINE int64_t chunk_of(int64_t i) const { return upper_bound_index(start, 0, chunks + 1, i) - 1; }
  EW_HD_INLINE K at(int64_t i) const {
    const int64_t c = chunk_of(i);
    return chunk[c][i - start[c]];
  }
};

// The boundary test itself: adjacent keys belong to different runs.
template <class K>
EW_HD_INLINE bool is_run_boundary(K previous, K current) {
  return !(previous == current);
}

// Whether a run starts at global position i (0 <= i < N).
template <class K>
EW_HD_INLINE bool run_starts_at(const ChunkedKeys<K>& keys, int64_t i) {
  if (i == 0) return true;
  const int64_t c = keys.chunk_of(i);
  const int64_t local = i - keys.start[c];
  const K current = keys.chunk[c][local];
  // The first key of a chunk compares with the last key of the previous nonempty chunk.
  const K previous = local > 0 ? keys.chunk[c][local - 1] : keys.at(i - 1);
  return is_run_boundary(previous, current);
}

// Given run_number[i] = number of run starts in [0, i] (an inclusive scan of the
// boundary flags): whether position i ends its run.
EW_HD_INLINE bool run_ends_at(const int64_t* run_number, int64_t i, int64_t n) {
  return i + 1 == n || run_number[i + 1] != run_number[i];
}

}  // namespace edgewise::rle_detail
