// Rows grouped by their output on the CPU: a stable counting sort of an index, and
// the loop that visits the groups in balanced chunks. Drivers whose per-output state
// outgrows the caches fold each group whole instead (scatter_reduce, scatter_softmax):
// the rows come in random order, but every state access hits L1.
// Host compiler only (OpenMP); included by dispatched CPU files only.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/row_groups.hpp"
#include "edgewise/kernels/common/bounds.hpp"
#include "cpu_isa/dispatch.hpp"

namespace edgewise::row_groups_detail {

inline namespace EW_CPU_ISA_NS {

// Group s holds rows order[offsets[s] .. offsets[s + 1]), in increasing order.
struct RowGroups {
  std::vector<int64_t> offsets;  // [S + 1]
  std::vector<uint32_t> order;   // [M]
};

// Counts per thread and output, one scan in (output, thread) order, then each thread
// places its own rows: stable, so a group's rows stay in increasing order. Every index
// entry must lie in [0, S), and M <= 2^32.
template <class I>
RowGroups group_rows(const I* index, int64_t M, int64_t S) {
  const int max_threads = omp_get_max_threads();
  RowGroups groups;
  groups.offsets.resize(static_cast<std::size_t>(S) + 1);
  groups.order.resize(static_cast<std::size_t>(M));
  // next[t * S + s]: thread t's next position for output s.
  std::vector<int64_t> next(static_cast<std::size_t>(max_threads) * static_cast<std::size_t>(S));
  int64_t* offsets = groups.offsets.data();
  uint32_t* order = groups.order.data();
#pragma omp parallel num_threads(max_threads) if (M >= (int64_t{1} << 15))
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t t = omp_get_thread_num();
    int64_t* mine = next.data() + t * S;
    std::fill(mine, mine + S, int64_t{0});
    const int64_t r_begin = M * t / threads, r_end = M * (t + 1) / threads;
    for (int64_t r = r_begin; r < r_end; ++r) ++mine[static_cast<int64_t>(index[r])];
#pragma omp barrier
#pragma omp single
    {
      int64_t position = 0;
      for (int64_t s = 0; s < S; ++s) {
        offsets[s] = position;
        for (int64_t u = 0; u < threads; ++u) {
          const int64_t n = next[u * S + s];
          next[u * S + s] = position;
          position += n;
        }
      }
      offsets[S] = position;
    }
    for (int64_t r = r_begin; r < r_end; ++r) order[mine[static_cast<int64_t>(index[r])]++] = static_cast<uint32_t>(r);
  }
  return groups;
}

// Calls f(s, begin, end, prefetch_end) for every group s (its rows at positions
// [begin, end) of order; prefetch_end: the end of the chunk, how far ahead a fold may
// prefetch). Groups go in contiguous chunks of about equal rows, taken dynamically;
// each group is visited by one thread. Call inside a parallel region (an omp for).
template <class F>
void for_each_group(const RowGroups& groups, F&& f) {
  const int64_t S = static_cast<int64_t>(groups.offsets.size()) - 1;
  const int64_t M = groups.offsets[S];
  const int64_t* off = groups.offsets.data();
  constexpr int64_t kMinChunkRows = 4096;
  const int64_t chunks = std::clamp<int64_t>(M / kMinChunkRows, 1, int64_t{8} * omp_get_num_threads());
#pragma omp for schedule(dynamic, 1)
  for (int64_t k = 0; k < chunks; ++k) {
    const int64_t first = k == 0 ? 0 : lower_bound_index(off, 0, S + 1, M * k / chunks);
    const int64_t last = k + 1 == chunks ? S : lower_bound_index(off, 0, S + 1, M * (k + 1) / chunks);
    const int64_t prefetch_end = off[last];
    for (int64_t s = first; s < last; ++s) f(s, off[s], off[s + 1], prefetch_end);
  }
}

// Asks for the `bytes` of row `row` of a row-major matrix with rows `row_bytes` apart.
inline void prefetch_row(const void* base, int64_t row, int64_t row_bytes) {
  const char* p = static_cast<const char*>(base) + row * row_bytes;
  for (int64_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b);
}

}  // namespace EW_CPU_ISA_NS
}  // namespace edgewise::row_groups_detail
