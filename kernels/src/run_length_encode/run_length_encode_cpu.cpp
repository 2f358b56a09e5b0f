// run_length_encode CPU driver: boundary flags -> scan -> materialise, as a blocked
// two-pass scan (common/blocked_scan.hpp) so the flags are never stored.
//
// Pass 1: each thread walks its contiguous block of global positions, staging its
// runs (value, start) in scratch up to one run per kKeysPerStagedRun keys and
// counting the rest with an adjacent-compare loop the compiler vectorises. The scan
// of the block counts numbers the runs; the capacity is checked there, before any
// write. Pass 2: each thread copies its staged runs to their place and, only past
// where staging stopped, walks its keys again (place_runs). A run's length is the
// distance to the next run start, which for a block's last run is the first run
// start of a later block (or N). Keys are read once unless runs are dense.
// Every output element has one writer: no atomics, same result at any thread count.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "common/blocked_scan.hpp"
#include "run_length_encode/run_length_encode_backends.hpp"
#include "run_length_encode/run_length_encode_core.hpp"

namespace edgewise::rle_detail {
namespace EW_CPU_ISA_NS {  // compiled once per ISA level (cpu_isa/dispatch.hpp)

namespace {

// Calls f(global_position, pointer, count) for the contiguous pieces of [begin, end)
// (one per chunk it touches; empty chunks give no piece).
template <class K, class F>
void for_each_piece(const ChunkedKeys<K>& keys, int64_t begin, int64_t end, const F& f) {
  if (begin >= end) return;
  int64_t i = begin;
  for (int64_t c = keys.chunk_of(begin); i < end; ++c) {
    const int64_t piece_end = std::min(keys.start[c + 1], end);
    if (piece_end > i) f(i, keys.chunk[c] + (i - keys.start[c]), piece_end - i);
    i = std::max(i, piece_end);
  }
}

// Run starts in [begin, end); `first` gets the position of the first (or stays
// unchanged). A piece's first key is tested with run_starts_at (the shared test
// that looks back across chunk seams and empty chunks, as every CUDA thread does);
// the others compare with their neighbour in a loop the compiler vectorises.
template <class K>
int64_t count_run_starts(const ChunkedKeys<K>& keys, int64_t begin, int64_t end, int64_t& first) {
  int64_t count = 0;
  for_each_piece(keys, begin, end, [&](int64_t position, const K* p, int64_t n) {
    int64_t here = run_starts_at(keys, position) ? 1 : 0;
    for (int64_t j = 1; j < n; ++j) here += is_run_boundary(p[j - 1], p[j]) ? 1 : 0;
    if (count == 0 && here > 0) {  // this block's first run start lies in this piece
      int64_t j = 0;
      if (!run_starts_at(keys, position)) {
        for (j = 1; !is_run_boundary(p[j - 1], p[j]); ++j) {
        }
      }
      first = position + j;
    }
    count += here;
  });
  return count;
}

// Writes the runs starting in [begin, end), numbered from `run`. `next_start` is the
// first run start after `end` (or N): where this block's last run ends.
//
// Run starts are staged branch-free (every key is written to the next stage slot,
// which advances only at a boundary), so runs at irregular distances cost no
// mispredicted branch; the stage goes out when full. The last staged run is held
// back because its length needs the next start. Spans without a boundary (found by
// a vectorised compare) are skipped, so long runs cost one streaming read.
template <bool kLengths, class K>
void place_runs(const ChunkedKeys<K>& keys, int64_t begin, int64_t end, int64_t run, int64_t next_start,
                K* __restrict values, int64_t* __restrict lengths) {
  constexpr int kStage = 256;
  constexpr int64_t kSpan = 64;
  K stage_key[kStage];
  int64_t stage_start[kStage];
  int staged = 0;
  // Emits staged runs [0, count); `end_of_last` is where the last of them ends.
  auto emit = [&](int count, int64_t end_of_last) {
    for (int q = 0; q < count; ++q) values[run + q] = stage_key[q];
    if constexpr (kLengths) {
      for (int q = 0; q + 1 < count; ++q) lengths[run + q] = stage_start[q + 1] - stage_start[q];
      if (count > 0) lengths[run + count - 1] = end_of_last - stage_start[count - 1];
    }
    run += count;
  };
  // Stages key j of piece p (at global `position`) if `boundary`.
  auto stage = [&](const K* p, int64_t position, int64_t j, bool boundary) {
    stage_key[staged] = p[j];
    stage_start[staged] = position + j;
    staged += boundary ? 1 : 0;
    if (staged == kStage) {  // all but the last go out; it moves to the front
      emit(kStage - 1, stage_start[kStage - 1]);
      stage_key[0] = stage_key[kStage - 1];
      stage_start[0] = stage_start[kStage - 1];
      staged = 1;
    }
  };
  for_each_piece(keys, begin, end, [&](int64_t position, const K* p, int64_t n) {
    stage(p, position, 0, run_starts_at(keys, position));
    for (int64_t j0 = 1; j0 < n; j0 += kSpan) {
      const int64_t j1 = std::min(n, j0 + kSpan);
      int any = 0;
      for (int64_t j = j0; j < j1; ++j) any |= is_run_boundary(p[j - 1], p[j]) ? 1 : 0;
      if (!any) continue;
      for (int64_t j = j0; j < j1; ++j) stage(p, position, j, is_run_boundary(p[j - 1], p[j]));
    }
  });
  emit(staged, next_start);
}

// Stages the runs starting in [begin, end), key and start position, into (keys_out,
// starts_out) until `capacity` are staged. Returns how many were; `stop` is the first
// position not walked (end when the whole range was). Branch-free like place_runs:
// every key is written to the next slot, which advances only at a boundary.
template <class K>
int64_t stage_runs(const ChunkedKeys<K>& keys, int64_t begin, int64_t end, K* __restrict keys_out,
                   int64_t* __restrict starts_out, int64_t capacity, int64_t& stop) {
  constexpr int64_t kSpan = 64;
  int64_t staged = 0;
  stop = end;
  if (begin >= end || capacity == 0) {
    stop = begin;
    return 0;
  }
  int64_t c = keys.chunk_of(begin);
  for (int64_t i = begin; i < end; ++c) {
    const int64_t piece_end = std::min(keys.start[c + 1], end);
    if (piece_end <= i) continue;  // an empty chunk
    const K* p = keys.chunk[c] + (i - keys.start[c]);
    const int64_t n = piece_end - i;
    keys_out[staged] = p[0];
    starts_out[staged] = i;
    staged += run_starts_at(keys, i) ? 1 : 0;
    if (staged == capacity) {
      stop = i + 1;
      return staged;
    }
    for (int64_t j0 = 1; j0 < n; j0 += kSpan) {
      const int64_t j1 = std::min(n, j0 + kSpan);
      int any = 0;
      for (int64_t j = j0; j < j1; ++j) any |= is_run_boundary(p[j - 1], p[j]) ? 1 : 0;
      if (!any) continue;
      for (int64_t j = j0; j < j1; ++j) {
        keys_out[staged] = p[j];
        starts_out[staged] = i + j;
        staged += is_run_boundary(p[j - 1], p[j]) ? 1 : 0;
        if (staged == capacity) {
          stop = i + j + 1;
          return staged;
        }
      }
    }
    i = piece_end;
  }
  return staged;
}

// Pass 1 reads each key once where it can: a block stages its runs in scratch (up to
// one run per kKeysPerStagedRun keys) while it counts them, and pass 2 copies them
// out. Only a block with more runs than that walks its keys again in pass 2, from
// where its staging stopped, so no input costs more than the two-read scheme.
constexpr int64_t kKeysPerStagedRun = 8;

template <bool kLengths, class K>
int64_t encode(const char* op, const ChunkedKeys<K>& keys, VectorView<K> values, VectorView<int64_t> lengths,
               Context& ctx) {
  const int64_t n = keys.size();
  if (n == 0) return 0;
  detail::BlockedScan scan(n);
  const int64_t blocks = scan.blocks();
  std::vector<int64_t> staged_at(static_cast<std::size_t>(blocks + 1), 0);  // block b's staging slots
  for (int64_t b = 0; b < blocks; ++b) {
    staged_at[b + 1] = staged_at[b] + (scan.end(b) - scan.begin(b)) / kKeysPerStagedRun + 1;
  }
  ScratchLayout layout;
  const std::size_t keys_at = layout.add<K>(staged_at[blocks]);
  const std::size_t starts_at = layout.add<int64_t>(staged_at[blocks]);
  void* base = ctx.scratch(layout.bytes());
  K* staged_keys = ScratchLayout::at<K>(base, keys_at);
  int64_t* staged_starts = ScratchLayout::at<int64_t>(base, starts_at);

  std::vector<int64_t> staged(static_cast<std::size_t>(blocks), 0);  // runs staged per block
  std::vector<int64_t> stop(static_cast<std::size_t>(blocks), 0);    // where staging stopped
  std::vector<int64_t> rest_first(static_cast<std::size_t>(blocks), n);  // first run start from stop on
  const int64_t runs = scan.count([&](int64_t b, int64_t begin, int64_t end) {
    staged[b] = stage_runs(keys, begin, end, staged_keys + staged_at[b], staged_starts + staged_at[b],
                           staged_at[b + 1] - staged_at[b], stop[b]);
    return staged[b] + count_run_starts(keys, stop[b], end, rest_first[b]);
  });
  require_run_capacity(op, runs, values, lengths, kLengths);
  // next_start[b]: the first run start after block b (N if none).
  std::vector<int64_t> next_start(static_cast<std::size_t>(blocks), n);
  for (int64_t b = blocks - 2; b >= 0; --b) {
    const int64_t first_of_next = staged[b + 1] > 0 ? staged_starts[staged_at[b + 1]] : rest_first[b + 1];
    next_start[b] = std::min(next_start[b + 1], first_of_next);
  }
  scan.place([&](int64_t b, int64_t, int64_t end, int64_t run) {
    const K* sk = staged_keys + staged_at[b];
    const int64_t* ss = staged_starts + staged_at[b];
    const int64_t count = staged[b];
    const int64_t after = std::min(rest_first[b], next_start[b]);  // where the last staged run ends
    for (int64_t q = 0; q < count; ++q) values.data[run + q] = sk[q];
    if constexpr (kLengths) {
      for (int64_t q = 0; q + 1 < count; ++q) lengths.data[run + q] = ss[q + 1] - ss[q];
      if (count > 0) lengths.data[run + count - 1] = after - ss[count - 1];
    }
    place_runs<kLengths>(keys, stop[b], end, run + count, next_start[b], values.data, lengths.data);
  });
  return runs;
}

}  // namespace

template <class K>
int64_t run_length_encode_cpu(const char* op, std::span<const VectorView<const K>> chunks, VectorView<K> values,
                              VectorView<int64_t> lengths, bool with_lengths, Context& ctx) {
  std::vector<const K*> pointers(chunks.size());
  std::vector<int64_t> start(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    pointers[c] = chunks[c].data;
    start[c + 1] = start[c] + chunks[c].size;
  }
  const ChunkedKeys<K> keys{pointers.data(), start.data(), static_cast<int64_t>(chunks.size())};
  return with_lengths ? encode<true>(op, keys, values, lengths, ctx) : encode<false>(op, keys, values, lengths, ctx);
}

#define EW_INSTANTIATE(K)                                                                                        \
  template int64_t run_length_encode_cpu<K>(const char*, std::span<const VectorView<const K>>, VectorView<K>, \
                                            VectorView<int64_t>, bool, Context&);
EW_INSTANTIATE(uint32_t)
EW_INSTANTIATE(int32_t)
EW_INSTANTIATE(int64_t)
#undef EW_INSTANTIATE

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::rle_detail
